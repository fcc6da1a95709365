//! Every rule a `topology!` declaration must satisfy, each error at the token that breaks it.
//! Checked: the result is the numbers the expansion needs.

use super::parse::{Cart, Graph, Item, Kind};
use syn::LitInt;

/// A checked grid: dims and periods (all `false` when not given).
pub(crate) struct CheckedCart {
    pub(crate) dims: Vec<usize>,
    pub(crate) periods: Vec<bool>,
}

/// A checked graph in MPI's form: cumulative degrees and the concatenated neighbour lists.
pub(crate) struct CheckedGraph {
    pub(crate) index: Vec<usize>,
    pub(crate) edges: Vec<usize>,
}

/// What a declaration checks out as.
pub(crate) enum Checked {
    Cart(CheckedCart),
    Graph(CheckedGraph),
}

/// Checks one declaration; pushes every error found to `errors`.
pub(crate) fn check(item: &Item, errors: &mut Vec<syn::Error>) -> Option<Checked> {
    let before = errors.len();
    let checked = match &item.kind {
        Kind::Cart(cart) => check_cart(cart, errors).map(Checked::Cart),
        Kind::Graph(graph) => check_graph(graph, errors).map(Checked::Graph),
    };
    checked.filter(|_| errors.len() == before)
}

fn number(lit: &LitInt, what: &str, errors: &mut Vec<syn::Error>) -> Option<usize> {
    lit.base10_parse::<usize>()
        .map_err(|_| {
            errors.push(syn::Error::new(
                lit.span(),
                format!("{what} must be a non-negative integer that fits in usize, got `{lit}`"),
            ))
        })
        .ok()
}

fn check_cart(cart: &Cart, errors: &mut Vec<syn::Error>) -> Option<CheckedCart> {
    if cart.dims.is_empty() {
        errors.push(syn::Error::new(
            cart.dims_span,
            "a grid needs at least one dim, like `cart[4]` or `cart[4, 4]`; `cart[]` is empty",
        ));
        return None;
    }
    let mut dims = Vec::with_capacity(cart.dims.len());
    for (i, lit) in cart.dims.iter().enumerate() {
        match number(lit, "a dim", errors) {
            Some(0) => errors.push(syn::Error::new(
                lit.span(),
                format!("dim {i} is 0: every dim of a grid must be at least 1"),
            )),
            Some(d) => dims.push(d),
            None => {}
        }
    }
    if dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .is_none()
    {
        errors.push(syn::Error::new(
            cart.dims_span,
            "the grid has more ranks than usize can count",
        ));
    }
    let periods = match &cart.periods {
        None => vec![false; cart.dims.len()],
        Some((span, p)) if p.len() != cart.dims.len() => {
            errors.push(syn::Error::new(
                *span,
                format!(
                    "`periodic` has {} entr{} but the grid has {} dim{}: give one `true` or `false` per dim",
                    p.len(),
                    if p.len() == 1 { "y" } else { "ies" },
                    cart.dims.len(),
                    if cart.dims.len() == 1 { "" } else { "s" },
                ),
            ));
            return None;
        }
        Some((_, p)) => p.iter().map(|b| b.value).collect(),
    };
    Some(CheckedCart { dims, periods })
}

fn check_graph(graph: &Graph, errors: &mut Vec<syn::Error>) -> Option<CheckedGraph> {
    if graph.nodes.is_empty() {
        errors.push(syn::Error::new(
            graph.brace_span,
            "a graph needs at least one node, like `graph { 0: [] }`; this one is empty",
        ));
        return None;
    }
    let ids: Vec<Option<usize>> = graph
        .nodes
        .iter()
        .map(|n| number(&n.id, "a node", errors))
        .collect();
    let n = ids.iter().flatten().max().map_or(0, |&m| m + 1);
    // Each node once.
    let mut lists: Vec<Option<Vec<usize>>> = vec![None; n];
    for (node, id) in graph.nodes.iter().zip(&ids) {
        let Some(id) = *id else { continue };
        if lists[id].is_some() {
            errors.push(syn::Error::new(
                node.id.span(),
                format!("node {id} is listed twice: give each node's neighbours in one list"),
            ));
            continue;
        }
        let mut edges = Vec::with_capacity(node.edges.len());
        for e in &node.edges {
            if let Some(to) = number(e, "a neighbour", errors) {
                edges.push(to);
            }
        }
        lists[id] = Some(edges);
    }
    // Nodes 0..n, none missing.
    let missing: Vec<String> = (0..n)
        .filter(|&i| lists[i].is_none())
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        errors.push(syn::Error::new(
            graph.brace_span,
            format!(
                "the nodes must be 0..{n}, but node{} {} {} missing",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                if missing.len() == 1 { "is" } else { "are" },
            ),
        ));
    }
    // Every edge to a node that exists.
    for node in &graph.nodes {
        for e in &node.edges {
            if let Ok(to) = e.base10_parse::<usize>() {
                if lists.get(to).is_none_or(Option::is_none) {
                    errors.push(syn::Error::new(
                        e.span(),
                        format!(
                            "an edge to node {to}, which does not exist: the graph's nodes are {}",
                            describe(&lists)
                        ),
                    ));
                }
            }
        }
    }
    let mut index = Vec::with_capacity(n);
    let mut edges = Vec::new();
    for list in lists.iter().flatten() {
        edges.extend_from_slice(list);
        index.push(edges.len());
    }
    Some(CheckedGraph { index, edges })
}

/// The listed nodes, for messages: `0..4` when contiguous, else a list.
fn describe(lists: &[Option<Vec<usize>>]) -> String {
    let present: Vec<String> = (0..lists.len())
        .filter(|&i| lists[i].is_some())
        .map(|i| i.to_string())
        .collect();
    if present.len() == lists.len() {
        format!("0..{}", lists.len())
    } else {
        present.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::Input;
    use super::*;
    use quote::quote;

    fn errors_of(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let input: Input = syn::parse2(tokens).unwrap();
        let mut errors: Vec<syn::Error> = input.errors;
        for item in &input.items {
            check(item, &mut errors);
        }
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn good_declarations_pass() {
        assert!(errors_of(
            quote!(pub T = cart[4, 4] periodic[true, false] reorder = true;
                                 S = graph { 1: [0], 0: [1, 1] };)
        )
        .is_empty());
    }

    #[test]
    fn every_error_is_reported_at_once() {
        let errs = errors_of(
            quote!(A = cart[0, 2, 0] periodic[true]; B = graph { 0: [3], 0: [], 2: [] } wrap = 1;),
        );
        assert_eq!(errs.len(), 7, "{errs:#?}");
        assert!(errs[0].contains("unknown key `wrap`"));
        assert!(errs.iter().any(|e| e.contains("dim 2 is 0")));
        assert!(errs
            .iter()
            .any(|e| e.contains("`periodic` has 1 entry but the grid has 3 dims")));
        assert!(errs.iter().any(|e| e.contains("node 0 is listed twice")));
        assert!(errs.iter().any(|e| e.contains("node 1 is missing")));
        assert!(errs.iter().any(|e| e.contains("edge to node 3")));
    }

    #[test]
    fn graph_arrays_are_mpis() {
        let input: Input = syn::parse2(quote!(S = graph { 1: [0], 0: [1, 2], 2: [0] };)).unwrap();
        let Some(Checked::Graph(g)) = check(&input.items[0], &mut Vec::new()) else {
            panic!("a graph")
        };
        assert_eq!((g.index, g.edges), (vec![2, 3, 4], vec![1, 2, 0, 0]));
    }
}
