//! The rules of `#[derive(Datatype)]` that need no type information: field types that are
//! syntactically never a `Datatype` — references, raw pointers, function pointers, slices,
//! trait objects, `impl Trait` — are refused here, at the field, with the reason. Everything
//! else is left to the compiler on the expanded code: a field whose type does not implement
//! `Datatype` (`Box`, `Vec`, `String`, `Option`, `Cell`, a struct without the derive, …) gets
//! E0277 at the field with the trait's `#[diagnostic::on_unimplemented]` message, and a
//! skipped field that is not zero-sized fails a const assertion. A type is never judged by its
//! name: a user's own `struct Cell` that derives `Datatype` is a valid field.

use super::ast::Input;

/// Records an error for every field type that cannot be part of a message.
pub(crate) fn check(input: &Input<'_>, errors: &mut Vec<syn::Error>) {
    for field in input.fields.iter().filter(|f| !f.skip) {
        check_type(field.ty, errors);
    }
}

fn check_type(ty: &syn::Type, errors: &mut Vec<syn::Error>) {
    let why = match ty {
        syn::Type::Reference(_) => {
            "a reference cannot be a Datatype field: it is an address in this process, \
             meaningless to another rank; store the value itself"
        }
        syn::Type::Ptr(_) => {
            "a raw pointer cannot be a Datatype field: it is an address in this process, \
             meaningless to another rank"
        }
        syn::Type::BareFn(_) => {
            "a function pointer cannot be a Datatype field: it is an address in this process, \
             meaningless to another rank"
        }
        syn::Type::Slice(_) => {
            "a slice cannot be a Datatype field: it is unsized, and elements of a message have \
             a fixed size; use an array [T; N]"
        }
        syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) => {
            "a trait object cannot be a Datatype field: its type, and so its type map, is only \
             known at run time; use a concrete type"
        }
        syn::Type::Array(a) => return check_type(&a.elem, errors),
        syn::Type::Tuple(t) => return t.elems.iter().for_each(|e| check_type(e, errors)),
        syn::Type::Paren(p) => return check_type(&p.elem, errors),
        syn::Type::Group(g) => return check_type(&g.elem, errors),
        _ => return, // paths, `_`, macros: the `Datatype` bound decides
    };
    errors.push(syn::Error::new_spanned(ty, why));
}
