#!/usr/bin/env python3
"""Recall on LibTorch code devlint was not tuned on: plant one device bug per mutant, by script.

Two kinds of plant, each in a copy of the file put back afterwards:
  tensor-move  delete one `.to(<device variable>)` applied to a tensor (`batch.data.to(device)`),
               at most three per file (first, middle, last);
  member-move  after the statement that moves the model (`model->to(device);`), move one of its
               member modules on its own to the CPU (`model->fc2->to(torch::kCPU);`): the member
               computes on the CPU, the rest of the model on `device`.
A mutant is found when devlint reports a finding (code, line, message) the untouched file does
not have. Findings on the untouched files are what precision is read from (read them by hand).

  bench/cpp_plant.py DEVLINT FILE...    (env: DEVLINT_PCH_DIR to share a precompiled header)

The numbers of the last run are in bench/README.md.
"""
import json
import os
import re
import shutil
import subprocess
import sys

TENSOR_MOVE = re.compile(r'(?<=\w)\.to\((\w*device\w*)\)')
MODEL_MOVE = re.compile(r'^(\s*)(\w+)(->|\.)to\((\w+)\);', re.M)
MEMBER = re.compile(r'(\w+)\s*(?:=\s*|\()register_module\(\s*"\w+"')


def run(devlint, path):
    p = subprocess.run([devlint, 'check', '--no-cache', '--output-format', 'json', path],
                       capture_output=True, text=True)
    try:
        data = json.loads(p.stdout or '[]')
    except ValueError:
        return None, p.stderr
    return {(f['code'], f['location']['row'], f['message']) for f in data}, p.stderr


def mutants(text):
    """(kind, line, description, mutated text) for each plant in `text`."""
    moves = list(TENSOR_MOVE.finditer(text))
    if len(moves) > 3:
        moves = [moves[0], moves[len(moves) // 2], moves[-1]]
    for m in moves:
        line = text.count('\n', 0, m.start()) + 1
        source_line = text[text.rfind('\n', 0, m.start()) + 1:text.find('\n', m.start())]
        yield 'tensor-move', line, source_line.strip(), text[:m.start()] + text[m.end():]
    members = [m.group(1) for m in MEMBER.finditer(text)]
    model = MODEL_MOVE.search(text)
    if model and members:
        indent, variable, arrow = model.group(1), model.group(2), model.group(3)
        planted = '%s%s%s%s->to(torch::kCPU);' % (indent, variable, arrow, members[-1])
        at = model.end()
        line = text.count('\n', 0, at) + 2
        yield 'member-move', line, planted.strip(), text[:at] + '\n' + planted + text[at:]


def main():
    devlint, files = sys.argv[1], sys.argv[2:]
    totals = {}
    for path in files:
        text = open(path, encoding="latin-1").read()  # bytes kept as they are (GBK comments)
        base, err = run(devlint, path)
        if base is None:
            print('ERROR', path, err[:300])
            continue
        print('FILE', path, 'findings', len(base), 'stderr', err.strip()[:200].replace('\n', ' | '))
        for f in sorted(base):
            print('  ORIG', f)
        for kind, line, what, mutant in mutants(text):
            shutil.copy(path, path + '.orig')
            try:
                with open(path, "w", encoding="latin-1") as out:
                    out.write(mutant)
                got, err = run(devlint, path)
            finally:
                shutil.move(path + '.orig', path)
            new = (got or set()) - base
            found, total = totals.get(kind, (0, 0))
            totals[kind] = (found + bool(new), total + 1)
            print('  PLANT %-11s line %d %-5s %s' % (kind, line, 'FOUND' if new else 'MISS',
                                                     what[:90]))
            for f in sorted(new):
                print('     NEW', f)
    for kind, (found, total) in sorted(totals.items()):
        print('RECALL %s %d/%d' % (kind, found, total))


if __name__ == '__main__':
    main()
