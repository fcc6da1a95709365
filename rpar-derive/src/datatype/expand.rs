//! The expansion of `#[derive(Datatype)]`: an `unsafe impl Datatype` whose constant layout puts
//! each field's layout at its `core::mem::offset_of!`, with the extent `size_of::<Self>()`
//! (for a non-generic struct, `type_map()` returns that map flattened into a static at compile
//! time), plus const assertions of the layout facts the impl relies on.
//!
//! The layout is a constant of a hidden helper, where each field's `<T as Datatype>::LAYOUT`
//! is spanned at the field's type: a field that is not a `Datatype` is refused there, once,
//! with the trait's message. The impls carry `for<'__rpar> FieldType: Datatype` for every
//! field, so they hold only where that is so and add no errors of their own when it is not (a
//! struct with a `Cell` is not `Sync`, which `Datatype` requires: without the bounds that is
//! two more errors). The higher-ranked binder keeps a bound on a concrete type from being
//! checked where it is written (stable Rust refuses a false "trivial" bound at once).

use super::ast::Input;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

pub(crate) fn expand(input: &Input<'_>) -> TokenStream {
    let Input {
        ident,
        generics,
        fields,
        krate,
    } = input;
    let mut bounded = (*generics).clone();
    for param in bounded.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#krate::Datatype));
    }
    let (impl_generics, ty_generics, where_clause) = bounded.split_for_impl();
    let this = quote!(#ident #ty_generics);
    let data = fields.iter().filter(|f| !f.skip);
    // each field's layout, spanned at its type: the one place that asks whether the type is a
    // `Datatype`, so a field that is not gets one error, there, with the trait's message
    let layouts = data.clone().map(|f| {
        let (member, ty) = (&f.member, f.ty);
        quote_spanned! {ty.span()=>
            (::core::mem::offset_of!(#this, #member), &<#ty as #krate::Datatype>::LAYOUT)
        }
    });
    // the impls hold only where every field is a `Datatype`: so a field that is not makes no
    // further errors (the struct is then neither `Send` nor `Sync`, say, as `Datatype`
    // requires); `for<'__rpar>` keeps a bound on a concrete type from being checked (and
    // refused) where it is written
    let mut held = bounded.clone();
    let predicates = &mut held.make_where_clause().predicates;
    for f in data {
        let ty = f.ty;
        predicates.push(syn::parse_quote!(for<'__rpar> #ty: #krate::Datatype));
    }
    let held = held.where_clause;
    let asserts = fields.iter().map(|f| {
        let (member, ty) = (&f.member, f.ty);
        if f.skip {
            quote_spanned! {f.original.span()=>
                ::core::assert!(
                    ::core::mem::size_of::<#ty>() == 0,
                    "#[rpar(skip)] is only for zero-sized fields such as PhantomData: a skipped \
                     field with data would be neither sent nor received"
                );
            }
        } else {
            quote_spanned! {ty.span()=>
                ::core::assert!(
                    ::core::mem::offset_of!(#this, #member) + ::core::mem::size_of::<#ty>()
                        <= ::core::mem::size_of::<#this>()
                );
            }
        }
    });
    // a concrete struct's map is flattened into a static once, at compile time; a generic
    // one's is built from the constant layout when asked for (the trait's default)
    let (force, type_map) = if generics.params.is_empty() {
        (
            quote!(const _: () = __RparLayout::<#ident>::CHECKED;),
            quote! {
                fn type_map() -> #krate::TypeMap {
                    static MAP: #krate::__private::StaticMap<
                        { #krate::__private::static_len(&__RparLayout::<#ident>::LAYOUT) },
                    > = #krate::__private::StaticMap::new(__RparLayout::<#ident>::LAYOUT);
                    MAP.type_map()
                }
            },
        )
    } else {
        (quote!(), quote!())
    };
    quote! {
        #[doc(hidden)]
        const _: () = {
            struct __RparLayout<T: ?Sized>(::core::marker::PhantomData<T>);
            impl #impl_generics __RparLayout<#this> #where_clause {
                /// The layout facts the type map relies on, checked by the compiler.
                const CHECKED: () = { #(#asserts)* };
                /// Each field's layout at its offset, in a value of `size_of` the struct.
                const LAYOUT: #krate::TypeLayout = {
                    #[allow(clippy::let_unit_value)] // forces the layout check
                    let () = Self::CHECKED;
                    #krate::TypeLayout::Struct {
                        size: ::core::mem::size_of::<#this>(),
                        fields: &[#(#layouts),*],
                    }
                };
            }
            #force

            #[automatically_derived]
            // SAFETY: every non-skipped field's type map sits at the field's offset_of!, the
            // extent is size_of::<Self>() with lb 0, and skipped fields are zero-sized (checked
            // above), so the bytes not covered are exactly the padding of Self.
            unsafe impl #impl_generics #krate::Datatype for #this #held {
                const LAYOUT: #krate::TypeLayout = __RparLayout::<Self>::LAYOUT;
                #type_map
            }

            #[automatically_derived]
            // a run's rank may return it, also across processes on the MPI transport
            impl #impl_generics #krate::RankResult for #this #held {
                fn send_result(&self, link: &#krate::ResultLink<'_>) -> #krate::Result<()> {
                    link.send_value(self)
                }
                fn recv_result(link: &#krate::ResultLink<'_>) -> #krate::Result<Self> {
                    link.recv_value()
                }
                fn send_all(items: &[Self], link: &#krate::ResultLink<'_>) -> #krate::Result<()> {
                    link.send(items)
                }
                fn recv_all(
                    link: &#krate::ResultLink<'_>,
                ) -> #krate::Result<::std::vec::Vec<Self>> {
                    link.recv()
                }
            }
        };
    }
}

/// What is emitted next to errors: an impl that never runs (compilation fails anyway), so that
/// uses of the type do not add "`Datatype` is not implemented" errors to the real ones.
pub(crate) fn stub(input: &syn::DeriveInput, krate: &syn::Path) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        // SAFETY: never compiled into a program: an error is reported beside it.
        unsafe impl #impl_generics #krate::Datatype for #ident #ty_generics #where_clause {
            const LAYOUT: #krate::TypeLayout = #krate::TypeLayout::Struct {
                size: 0,
                fields: &[],
            };
            fn type_map() -> #krate::TypeMap {
                ::core::unimplemented!("#[derive(Datatype)] reported an error")
            }
        }
    }
}
