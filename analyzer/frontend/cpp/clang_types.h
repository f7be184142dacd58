// What the C++ frontend asks of Clang's types: LibTorch's tensors, devices, options and modules
// (a module held by `Net`, `std::shared_ptr<NetImpl>` or `NetImpl&`).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Type.h>

namespace devlint::cpp {

std::string qualified_name(const clang::NamedDecl *d);
// The record a type names, through references and pointers; null when none (or null types, in
// code Clang recovered from errors).
const clang::CXXRecordDecl *record_of(clang::QualType type);
bool is_record(clang::QualType type, std::string_view name);
bool is_tensor_type(clang::QualType t);
bool is_device_type(clang::QualType t); // c10::Device or c10::DeviceType
bool is_options_type(clang::QualType t);
bool derives_from(const clang::CXXRecordDecl *r, std::string_view base, int depth = 0);
// The module class a value of `type` holds: NetImpl for `Net`, `std::shared_ptr<NetImpl>`,
// `NetImpl&`; torch::jit::Module itself. Null when it holds none.
const clang::CXXRecordDecl *module_class_of(clang::QualType type);
bool in_namespace(const clang::Decl *d, std::initializer_list<const char *> roots);
std::string device_type_name(std::string_view enumerator); // kCUDA -> cuda

} // namespace devlint::cpp
