//! The rules of `#[derive(Datatype)]` that need no type information: field types that can
//! never be a `Datatype` are refused here, at the field, with the reason. Everything else (a
//! field whose type does not implement `Datatype`, a skipped field that is not zero-sized) is
//! checked by the compiler on the expanded code, with spans at the field.

use super::ast::Input;

/// Records an error for every field type that cannot be part of a message.
pub(crate) fn check(input: &Input<'_>, errors: &mut Vec<syn::Error>) {
    for field in input.fields.iter().filter(|f| !f.skip) {
        check_type(field.ty, errors);
    }
}

/// Owning or shared-pointer types, with what to do instead.
const HEAP: &[(&str, &str)] = &[
    ("Box", "a Box points to heap memory of this process"),
    ("Vec", "a Vec points to heap memory of this process; use an array [T; N], or send the Vec itself with send_owned"),
    ("String", "a String points to heap memory of this process; use a fixed-size [u8; N]"),
    ("Rc", "an Rc points to shared memory of this process"),
    ("Arc", "an Arc points to shared memory of this process"),
    ("Cell", "interior mutability cannot be sent as bytes"),
    ("RefCell", "interior mutability cannot be sent as bytes"),
    ("Option", "an Option's tag has invalid bit patterns; send a flag and a value instead"),
    ("HashMap", "a HashMap points to heap memory of this process"),
    ("BTreeMap", "a BTreeMap points to heap memory of this process"),
    ("VecDeque", "a VecDeque points to heap memory of this process"),
];

fn check_type(ty: &syn::Type, errors: &mut Vec<syn::Error>) {
    let refuse = |why: String| syn::Error::new_spanned(ty, why);
    match ty {
        syn::Type::Reference(_) => errors.push(refuse(
            "a reference cannot be a Datatype field: it is an address in this process, \
             meaningless to another rank; store the value itself"
                .into(),
        )),
        syn::Type::Ptr(_) => errors.push(refuse(
            "a raw pointer cannot be a Datatype field: it is an address in this process, \
             meaningless to another rank"
                .into(),
        )),
        syn::Type::Slice(_) | syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) => errors
            .push(refuse(
            "an unsized field cannot be a Datatype field: elements of a message have a fixed size"
                .into(),
        )),
        syn::Type::BareFn(_) => errors.push(refuse(
            "a function pointer cannot be a Datatype field: it is an address in this process"
                .into(),
        )),
        syn::Type::Array(a) => check_type(&a.elem, errors),
        syn::Type::Tuple(t) => t.elems.iter().for_each(|e| check_type(e, errors)),
        syn::Type::Paren(p) => check_type(&p.elem, errors),
        syn::Type::Group(g) => check_type(&g.elem, errors),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return;
            };
            if let Some((name, why)) = HEAP.iter().find(|(n, _)| last.ident == n) {
                errors.push(syn::Error::new_spanned(
                    ty,
                    format!("`{name}` cannot be a Datatype field: {why}"),
                ));
            }
        }
        _ => {}
    }
}
