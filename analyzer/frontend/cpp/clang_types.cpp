#include "frontend/cpp/clang_types.h"

#include <cctype>
#include <set>

#include <clang/AST/DeclTemplate.h>

namespace devlint::cpp {

std::string qualified_name(const clang::NamedDecl *d) {
  return d ? d->getQualifiedNameAsString() : std::string();
}

// Types can be null in code Clang recovered from errors: every helper below accepts that.
const clang::CXXRecordDecl *record_of(clang::QualType type) {
  if (type.isNull())
    return nullptr;
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto *p = type->getAs<clang::PointerType>())
    type = p->getPointeeType().getCanonicalType();
  const clang::CXXRecordDecl *r = type->getAsCXXRecordDecl();
  return r ? r->getDefinition() ? r->getDefinition() : r : nullptr;
}

bool is_record(clang::QualType type, std::string_view name) {
  const clang::CXXRecordDecl *r = record_of(type);
  return r && qualified_name(r) == name;
}

// Tensor methods are TensorBase's: a call's object is often converted to it.
bool is_tensor_type(clang::QualType t) {
  return is_record(t, "at::Tensor") || is_record(t, "at::TensorBase");
}
bool is_device_type(clang::QualType t) {
  if (t.isNull())
    return false;
  return is_record(t, "c10::Device") ||
         qualified_name(t.getNonReferenceType()->getAsTagDecl()) == "c10::DeviceType";
}
bool is_options_type(clang::QualType t) { return is_record(t, "c10::TensorOptions"); }

bool derives_from(const clang::CXXRecordDecl *r, std::string_view base, int depth) {
  if (!r || depth > 16)
    return false;
  if (qualified_name(r) == base)
    return true;
  if (!r->hasDefinition())
    return false;
  for (const clang::CXXBaseSpecifier &b : r->getDefinition()->bases())
    if (derives_from(record_of(b.getType()), base, depth + 1))
      return true;
  return false;
}

// The module class a value of `type` holds: NetImpl for `Net` (TORCH_MODULE's holder),
// `std::shared_ptr<NetImpl>`, `NetImpl&`; torch::jit::Module itself. Each record is looked at
// once: a class can hold itself (`class Loop : ModuleHolder<Loop>`), which is a cycle.
namespace {

const clang::CXXRecordDecl *module_class_of(clang::QualType type,
                                            std::set<const clang::CXXRecordDecl *> &seen) {
  const clang::CXXRecordDecl *r = record_of(type);
  for (int depth = 0; r && depth < 4 && seen.insert(r).second; ++depth) {
    if (derives_from(r, "torch::nn::Module") || derives_from(r, "torch::jit::Module"))
      return r;
    const auto *spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(r);
    const clang::CXXRecordDecl *next = nullptr;
    if (spec &&
        (qualified_name(spec) == "torch::nn::ModuleHolder" ||
         qualified_name(spec) == "std::shared_ptr") &&
        spec->getTemplateArgs().size() > 0 &&
        spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Type)
      next = record_of(spec->getTemplateArgs()[0].getAsType());
    if (!next && r->hasDefinition())
      for (const clang::CXXBaseSpecifier &b : r->bases()) {
        const auto *base = record_of(b.getType());
        if (base && qualified_name(base) == "torch::nn::ModuleHolder")
          next = module_class_of(b.getType(), seen);
      }
    r = next;
  }
  return nullptr;
}

} // namespace

const clang::CXXRecordDecl *module_class_of(clang::QualType type) {
  std::set<const clang::CXXRecordDecl *> seen;
  return module_class_of(type, seen);
}

bool in_namespace(const clang::Decl *d, std::initializer_list<const char *> roots) {
  std::string q = qualified_name(llvm::dyn_cast_or_null<clang::NamedDecl>(d));
  for (const char *root : roots)
    if (q.rfind(std::string(root) + "::", 0) == 0)
      return true;
  return false;
}

std::string device_type_name(std::string_view enumerator) {
  std::string out;
  for (char c : enumerator)
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (out.size() > 1 && out[0] == 'k')
    out = out.substr(1); // kCUDA -> cuda
  return out;
}

} // namespace devlint::cpp
