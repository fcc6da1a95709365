//! The parsed input of `#[derive(Datatype)]`: the struct's fields with their `#[rpar(…)]`
//! options, keeping the original `syn` nodes for spans.

use syn::spanned::Spanned;

/// A struct deriving `Datatype`.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) generics: &'a syn::Generics,
    pub(crate) fields: Vec<Field<'a>>,
    /// The path of the rpar crate: `::rpar` or `#[rpar(crate = "…")]`.
    pub(crate) krate: syn::Path,
}

/// One field of the struct.
pub(crate) struct Field<'a> {
    pub(crate) member: syn::Member,
    pub(crate) ty: &'a syn::Type,
    /// `#[rpar(skip)]`: a zero-sized field left out of the type map.
    pub(crate) skip: bool,
    pub(crate) original: &'a syn::Field,
}

pub(crate) fn default_crate() -> syn::Path {
    syn::parse_quote!(::rpar)
}

impl<'a> Input<'a> {
    /// The struct and its options; `None` (with errors recorded) for an enum or a union.
    pub(crate) fn from_syn(
        input: &'a syn::DeriveInput,
        errors: &mut Vec<syn::Error>,
    ) -> Option<Self> {
        let krate = container_options(&input.attrs, errors);
        let data = match &input.data {
            syn::Data::Struct(s) => s,
            syn::Data::Enum(e) => {
                errors.push(syn::Error::new(
                    e.enum_token.span,
                    "#[derive(Datatype)] is for structs only: an enum's discriminant has bit \
                     patterns that are no valid value, so its bytes cannot be received as they come",
                ));
                return None;
            }
            syn::Data::Union(u) => {
                errors.push(syn::Error::new(
                    u.union_token.span,
                    "#[derive(Datatype)] is for structs only: which field of a union holds data \
                     is not known, so it has no type map",
                ));
                return None;
            }
        };
        let fields = data
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Field {
                member: f.ident.clone().map_or_else(
                    || {
                        syn::Member::Unnamed(syn::Index {
                            index: i as u32,
                            span: f.ty.span(),
                        })
                    },
                    syn::Member::Named,
                ),
                ty: &f.ty,
                skip: field_skip(&f.attrs, errors),
                original: f,
            })
            .collect();
        Some(Input {
            ident: &input.ident,
            generics: &input.generics,
            fields,
            krate: krate.unwrap_or_else(default_crate),
        })
    }
}

/// `#[rpar(crate = "path")]` on the struct.
fn container_options(attrs: &[syn::Attribute], errors: &mut Vec<syn::Error>) -> Option<syn::Path> {
    let mut krate = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpar")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let s: syn::LitStr = meta.value()?.parse()?;
                krate = Some(s.parse::<syn::Path>()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown #[rpar] option on a struct: expected `crate = \"path::to::rpar\"`",
                ))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    krate
}

/// Whether a field has `#[rpar(skip)]`.
fn field_skip(attrs: &[syn::Attribute], errors: &mut Vec<syn::Error>) -> bool {
    let mut skip = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpar")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error(
                    "unknown #[rpar] option on a field: expected `skip` (for zero-sized fields \
                     such as PhantomData)",
                ))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    skip
}
