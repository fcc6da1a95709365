//! The syntax tree of `topology!`, keeping the original tokens for spans. Parsing is lenient
//! where it can be (an unknown key is recorded and skipped) so that every error is reported at
//! once.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, Attribute, Ident, LitBool, LitInt, Token, Visibility};

/// The whole input: declarations separated by `;`.
pub(crate) struct Input {
    pub(crate) items: Vec<Item>,
    /// Errors found while parsing that did not stop it (unknown keys, repeated keys).
    pub(crate) errors: Vec<syn::Error>,
}

/// One declaration: `#[attrs] vis Name = kind keys…;`
pub(crate) struct Item {
    /// The attributes to copy onto the type (all but `#[rpar(…)]`).
    pub(crate) attrs: Vec<Attribute>,
    /// The path of the rpar crate: `::rpar`, or what `#[rpar(crate = "…")]` says.
    pub(crate) krate: syn::Path,
    pub(crate) vis: Visibility,
    pub(crate) name: Ident,
    pub(crate) kind: Kind,
    /// `reorder = true|false`, if given.
    pub(crate) reorder: Option<LitBool>,
}

/// What the topology is.
pub(crate) enum Kind {
    /// `cart[d0, d1, …] periodic[p0, p1, …]`
    Cart(Cart),
    /// `graph { node: [neighbours…], … }`
    Graph(Graph),
}

/// A Cartesian grid.
pub(crate) struct Cart {
    /// The `[…]` of `cart[…]`.
    pub(crate) dims_span: Span,
    pub(crate) dims: Vec<LitInt>,
    /// `periodic[…]`: the span of its brackets and its entries.
    pub(crate) periods: Option<(Span, Vec<LitBool>)>,
}

/// A graph, as adjacency lists.
pub(crate) struct Graph {
    /// The `{…}`.
    pub(crate) brace_span: Span,
    pub(crate) nodes: Vec<Node>,
}

/// `id: [neighbours…]`
pub(crate) struct Node {
    pub(crate) id: LitInt,
    pub(crate) edges: Vec<LitInt>,
}

const KEYS: &str = "expected `periodic[…]` (grids only) or `reorder = true|false`";

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut items = Vec::new();
        let mut errors = Vec::new();
        while !input.is_empty() {
            items.push(parse_item(input, &mut errors)?);
        }
        Ok(Input { items, errors })
    }
}

fn parse_item(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Item> {
    let mut attrs = input.call(Attribute::parse_outer)?;
    let mut krate: syn::Path = syn::parse_quote!(::rpar);
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpar")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                krate = meta.value()?.parse::<syn::LitStr>()?.parse()?;
                Ok(())
            } else {
                Err(meta.error("unknown rpar attribute: expected `#[rpar(crate = \"path\")]`"))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    attrs.retain(|a| !a.path().is_ident("rpar"));
    let vis: Visibility = input.parse()?;
    let name: Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let kw: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "expected `cart[…]` or `graph { … }` after `=`"))?;
    let mut kind = match kw.to_string().as_str() {
        "cart" => {
            let content;
            let bracket = bracketed!(content in input);
            let dims = Punctuated::<LitInt, Token![,]>::parse_terminated(&content)?;
            Kind::Cart(Cart {
                dims_span: bracket.span.join(),
                dims: dims.into_iter().collect(),
                periods: None,
            })
        }
        "graph" => {
            let content;
            let brace = braced!(content in input);
            let nodes = Punctuated::<Node, Token![,]>::parse_terminated(&content)?;
            Kind::Graph(Graph {
                brace_span: brace.span.join(),
                nodes: nodes.into_iter().collect(),
            })
        }
        other => {
            return Err(syn::Error::new(
                kw.span(),
                format!("unknown topology kind `{other}`: expected `cart[…]` or `graph {{ … }}`"),
            ))
        }
    };
    let mut reorder = None;
    while !input.peek(Token![;]) {
        let key: Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), format!("{KEYS}, or `;`")))?;
        match (key.to_string().as_str(), &mut kind) {
            ("periodic", Kind::Cart(cart)) => {
                let content;
                let bracket = bracketed!(content in input);
                let p = Punctuated::<LitBool, Token![,]>::parse_terminated(&content)?;
                if cart.periods.is_some() {
                    errors.push(syn::Error::new(key.span(), "`periodic` is given twice"));
                }
                cart.periods = Some((bracket.span.join(), p.into_iter().collect()));
            }
            ("reorder", _) => {
                input.parse::<Token![=]>()?;
                let value: LitBool = input.parse()?;
                if reorder.is_some() {
                    errors.push(syn::Error::new(key.span(), "`reorder` is given twice"));
                }
                reorder = Some(value);
            }
            (other, _) => {
                let what = if other == "periodic" {
                    "`periodic` applies to grids only: a graph takes `reorder = true|false`"
                        .to_string()
                } else {
                    format!("unknown key `{other}`: {KEYS}")
                };
                errors.push(syn::Error::new(key.span(), what));
                // skip the key's value, up to the end of the declaration
                while !input.is_empty() && !input.peek(Token![;]) {
                    input.parse::<proc_macro2::TokenTree>()?;
                }
            }
        }
    }
    input.parse::<Token![;]>()?;
    Ok(Item {
        attrs,
        krate,
        vis,
        name,
        kind,
        reorder,
    })
}

impl Parse for Node {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let id: LitInt = input.parse()?;
        input.parse::<Token![:]>()?;
        let content;
        bracketed!(content in input);
        let edges = Punctuated::<LitInt, Token![,]>::parse_terminated(&content)?;
        Ok(Node {
            id,
            edges: edges.into_iter().collect(),
        })
    }
}
