//! `#[derive(Datatype)]`: parse the struct and its `#[rpar(…)]` attributes (`ast`), check every
//! rule that needs no type information (`check`), and expand to an `unsafe impl Datatype`
//! whose type map is a constant computed from `core::mem::offset_of!` (`expand`).
//!
//! Every error is reported at once, at the field or attribute it is about. Next to errors about
//! the item or its attributes a stub impl is emitted, so that the user sees those errors rather
//! than a cascade of "`Datatype` is not implemented" ones at every use. A field whose type is
//! syntactically never a `Datatype` (a reference, a pointer, a slice, …) gets no stub: such a
//! struct cannot meet `Datatype`'s `Copy + Send + Sync + 'static` bounds either, and a stub
//! would only add errors about those. Any other field type is left to the `Datatype` bound, at
//! the field (see `check.rs`): the field layouts are the one place that asks it, and the impls
//! hold only where every field is a `Datatype` (see `expand.rs`), so a bad field is one error.

mod ast;
mod check;
mod expand;

use proc_macro2::TokenStream;

/// The whole derive: never fails, errors come back as `compile_error!` next to a stub.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = Vec::new();
    let parsed = ast::Input::from_syn(&input, &mut errors);
    let mut field_errors = Vec::new();
    if let Some(parsed) = &parsed {
        check::check(parsed, &mut field_errors);
    }
    let stub = field_errors.is_empty();
    errors.append(&mut field_errors);
    match (parsed, combine(errors)) {
        (Some(parsed), None) => expand::expand(&parsed),
        (parsed, Some(err)) => {
            let krate = parsed.map_or_else(ast::default_crate, |p| p.krate);
            let mut out = err.into_compile_error();
            if stub {
                out.extend(expand::stub(&input, &krate));
            }
            out
        }
        (None, None) => unreachable!("a failed parse always records an error"),
    }
}

fn combine(errors: Vec<syn::Error>) -> Option<syn::Error> {
    let mut it = errors.into_iter();
    let mut first = it.next()?;
    for e in it {
        first.combine(e);
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::derive;
    use quote::quote;

    fn errors_of(input: proc_macro2::TokenStream) -> String {
        derive(input).to_string()
    }

    #[test]
    fn a_plain_struct_expands_to_offset_of_entries() {
        let out = derive(quote! { struct P { x: f32, n: u8 } }).to_string();
        assert!(
            out.contains("unsafe impl :: rpar :: Datatype for P"),
            "{out}"
        );
        assert!(out.contains("offset_of ! (P , x)"), "{out}");
        // the impl holds only where every field is a Datatype
        assert!(
            out.contains("for < '__rpar > f32 : :: rpar :: Datatype"),
            "{out}"
        );
        assert!(out.contains("automatically_derived"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn every_error_is_reported_at_once() {
        let out = errors_of(
            quote! { struct Bad<'a> { r: &'a u8, p: *const u8, f: fn(), #[rpar(nope)] x: u8 } },
        );
        assert_eq!(out.matches("compile_error").count(), 4, "{out}");
        assert!(
            !out.contains("unimplemented"),
            "no stub for unsendable fields: {out}"
        );
    }

    #[test]
    fn only_syntax_is_refused_never_a_name() {
        for ty in [
            quote!([u8]),
            quote!(dyn Send),
            quote!(impl Copy),
            quote!(fn(u8)),
            quote!([&'static u8; 2]),
            quote!((u8, *const u8)),
        ] {
            let out = errors_of(quote! { struct S { x: #ty } });
            assert!(out.contains("compile_error"), "{ty}: {out}");
        }
        // a user's own `Cell`, `Box`, `Option`, `Vec`: the Datatype bound decides, not the name
        let out = derive(quote! {
            struct S { a: Cell, b: Box, c: Option, d: my::Vec<u8>, e: [String; 2] }
        })
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("< Cell as :: rpar :: Datatype > :: LAYOUT"),
            "{out}"
        );
    }

    #[test]
    fn attribute_errors_come_with_a_stub() {
        let out = errors_of(quote! { #[rpar(nope)] struct P { x: u8 } });
        assert!(
            out.contains("compile_error") && out.contains("unimplemented"),
            "{out}"
        );
    }

    #[test]
    fn enums_and_unions_are_refused() {
        assert!(errors_of(quote! { enum E { A } }).contains("enum"));
        assert!(errors_of(quote! { union U { a: u8 } }).contains("union"));
    }

    #[test]
    fn the_crate_path_can_be_overridden() {
        let out = derive(quote! { #[rpar(crate = "other::rpar")] struct P(u8); }).to_string();
        assert!(out.contains("other :: rpar :: Datatype"), "{out}");
    }
}
