//! [`Window`]: the collective calls a process noted since its processes last agreed, kept to
//! name the first call on which they differ when a comparison of the digests fails; and
//! [`first_difference`], which finds that call among every process's window.
//!
//! A comparison that fails covers the calls since the comparison before it, which agreed (or
//! since the start): the window keeps those, counted by the calls *noted* — rpar's own
//! algorithms' calls among them, which make no comparison due — not by the comparisons' interval,
//! so it reaches back however the calls mix. It keeps the oldest [`KEPT`] of them: the first
//! call that differs is the one to name, and it is among the oldest.

use crate::transport::CollectiveCall;
use std::collections::VecDeque;

/// A call noted: its own fingerprint, the call, and for one MPI ran the element type's name.
pub(super) type Noted = (u64, CollectiveCall, Option<&'static str>);

/// Most calls a window keeps after the last agreement (a difference among later calls is
/// still found, but not named).
pub(super) const KEPT: usize = 512;

/// The calls of one communicator since the start of the comparison before the one in progress
/// (numbered from 0 in the order noted), the oldest [`KEPT`] of them.
#[derive(Debug, Default)]
pub(super) struct Window {
    calls: VecDeque<Noted>,
    /// The number of the oldest call kept.
    first: u64,
    /// Calls noted so far.
    noted: u64,
    /// `noted` when the last comparison started.
    started: u64,
    /// The number of the oldest call the window should keep (the call before the start of
    /// the comparison before last): `first` is later when calls since were not kept.
    keep_from: u64,
    /// The call noted last once the window no longer keeps calls (else the newest kept).
    beyond: Option<Noted>,
}

impl Window {
    /// Notes the next call: kept unless the window is full (one copy of the call either way).
    pub(super) fn note(&mut self, noted: Noted) {
        if !self.full() && self.calls.len() < KEPT {
            self.calls.push_back(noted);
        } else {
            self.beyond = Some(noted);
        }
        self.noted += 1;
    }

    /// Whether calls were noted after the ones kept (which it keeps no more until a comparison
    /// moves it on).
    pub(super) fn full(&self) -> bool {
        self.first + self.calls.len() as u64 != self.noted
    }

    /// The call noted last.
    pub(super) fn last(&self) -> Option<&Noted> {
        match self.full() {
            true => self.beyond.as_ref(),
            false => self.calls.back(),
        }
    }

    /// Changes the call noted last (its element type, folded in after it).
    pub(super) fn update_last(&mut self, update: impl FnOnce(&mut Noted)) {
        let last = match self.full() {
            true => self.beyond.as_mut(),
            false => self.calls.back_mut(),
        };
        if let Some(last) = last {
            update(last);
        }
    }

    /// A comparison starts now: from here on the window must reach back to the start of the
    /// one before it — whose result the next check learns — and to the call before that start,
    /// whose element type was folded in after it.
    pub(super) fn comparison_started(&mut self) {
        let keep_from = self.started.saturating_sub(1);
        self.keep_from = keep_from;
        self.started = self.noted;
        let end = self.first + self.calls.len() as u64;
        if keep_from >= end && self.full() {
            // calls since were not kept (more than KEPT): start afresh from the last
            self.calls.clear();
            self.first = self.noted;
            if let Some(last) = self.beyond.take() {
                self.calls.push_back(last);
                self.first -= 1;
            }
        } else if keep_from > self.first {
            self.calls.drain(..(keep_from - self.first) as usize);
            self.first = keep_from;
        }
    }

    /// Calls noted since the last comparison started (since the start, before the first).
    pub(super) fn since_comparison(&self) -> u64 {
        self.noted - self.started
    }

    /// The number of the oldest call kept.
    pub(super) fn first(&self) -> u64 {
        self.first
    }

    /// The number of the oldest call the window should keep: before [`Window::first`] when
    /// calls since were not kept.
    pub(super) fn keep_from(&self) -> u64 {
        self.keep_from
    }

    /// The calls kept, oldest first.
    pub(super) fn calls(&self) -> impl Iterator<Item = &Noted> {
        self.calls.iter()
    }
}

/// One process's window as the exchange gives it: its oldest call's number, the oldest it
/// should keep, whether it is full, and each call's fingerprint and description.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Seen {
    pub(super) first: u64,
    pub(super) keep_from: u64,
    pub(super) full: bool,
    pub(super) calls: Vec<(u64, String)>,
}

/// What one process did as its call number `k`, as far as its window tells.
#[derive(Debug, PartialEq)]
enum Call<'a> {
    Kept(u64, &'a str),
    /// The process noted fewer calls.
    None,
    /// Before or after the calls its window kept.
    Unknown,
}

impl Seen {
    fn call(&self, k: u64) -> Call<'_> {
        let end = self.first + self.calls.len() as u64;
        match k {
            _ if (self.first..end).contains(&k) => {
                let (f, text) = &self.calls[(k - self.first) as usize];
                Call::Kept(*f, text)
            }
            _ if k >= end && !self.full => Call::None,
            _ => Call::Unknown,
        }
    }
}

/// What a window says of a call it did not keep.
pub(super) const NOT_KEPT: &str =
    "past the calls a window keeps (512 from the comparison before last)";

/// The first call number on which two processes' windows tell of different calls (another
/// call, or none), and each process's view of it; `None` if the windows agree where they tell.
/// Where a window did not keep calls it should have (they were too many), the first difference
/// among the calls kept may follow an earlier one: each view then says so.
pub(super) fn first_difference(seen: &[Seen]) -> Option<(u64, Vec<String>)> {
    let from = seen.iter().map(|s| s.first).min()?;
    let to = seen.iter().map(|s| s.first + s.calls.len() as u64).max()?;
    let differ = |k: u64| {
        let told: Vec<Call<'_>> = seen
            .iter()
            .map(|s| s.call(k))
            .filter(|c| *c != Call::Unknown)
            .collect();
        told.iter().any(|c| match (c, &told[0]) {
            (Call::Kept(f, _), Call::Kept(g, _)) => f != g,
            (a, b) => a != b,
        })
    };
    let k = (from..to).find(|&k| differ(k))?;
    let gap = seen.iter().find(|s| s.first > s.keep_from);
    let views = seen
        .iter()
        .map(|s| {
            let view = match s.call(k) {
                Call::Kept(_, text) => text.to_string(),
                Call::None => "no collective call here".to_string(),
                Call::Unknown => format!("a call {NOT_KEPT}"),
            };
            match gap {
                Some(g) => format!(
                    "{view} (the first difference among the calls kept: calls #{} to #{} were \
                     not kept, an earlier one may differ)",
                    g.keep_from,
                    g.first - 1
                ),
                None => view,
            }
        })
        .collect();
    Some((k, views))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(seq: u32) -> Noted {
        let call = CollectiveCall {
            rank: 0,
            seq,
            operation: "bcast",
            root: Some(0),
            reduction: None,
            bytes: Some(12),
        };
        (seq as u64, call, None)
    }

    fn seqs(w: &Window) -> Vec<u32> {
        w.calls().map(|(_, c, _)| c.seq).collect()
    }

    #[test]
    fn the_window_reaches_back_to_the_comparison_before_last_however_many_calls_came_since() {
        let mut w = Window::default();
        // calls of rpar's own algorithms between comparisons: 200, 200, then 10
        let mut seq = 0..;
        for _ in 0..200 {
            w.note(numbered(seq.next().unwrap()));
        }
        w.comparison_started();
        for _ in 0..200 {
            w.note(numbered(seq.next().unwrap()));
        }
        w.comparison_started();
        for _ in 0..10 {
            w.note(numbered(seq.next().unwrap()));
        }
        // the comparison in progress started after call 399; the one before it after call
        // 199, whose type may have been folded in after it
        assert_eq!(w.first(), 199);
        assert_eq!(seqs(&w), (199..410).collect::<Vec<_>>());
        assert!(!w.full());
        assert_eq!(w.last().map(|n| n.1.seq), Some(409));
    }

    #[test]
    fn a_full_window_keeps_the_oldest_calls_and_starts_afresh_when_they_are_behind() {
        let mut w = Window::default();
        for seq in 0..KEPT as u32 + 10 {
            w.note(numbered(seq));
        }
        assert!(w.full());
        assert_eq!(seqs(&w), (0..KEPT as u32).collect::<Vec<_>>());
        w.update_last(|n| n.2 = Some("t"));
        assert_eq!(
            w.last().map(|n| (n.1.seq, n.2)),
            Some((KEPT as u32 + 9, Some("t")))
        );
        assert!(w.calls().all(|n| n.2.is_none()), "the kept calls are older");
        w.comparison_started(); // keeps from 0 still
        assert_eq!(w.first(), 0);
        w.note(numbered(KEPT as u32 + 10));
        w.comparison_started(); // must keep from KEPT + 9: not kept; the last call is
        assert_eq!((w.first(), w.full()), (KEPT as u64 + 10, false));
        assert_eq!(w.keep_from(), KEPT as u64 + 9);
        assert_eq!(w.last().map(|n| n.1.seq), Some(KEPT as u32 + 10));
        w.note(numbered(KEPT as u32 + 11));
        assert_eq!(seqs(&w), [KEPT as u32 + 10, KEPT as u32 + 11]);
    }

    #[test]
    fn a_full_window_that_must_keep_from_just_past_its_calls_starts_afresh() {
        let mut w = Window::default();
        for seq in 0..KEPT as u32 + 1 {
            w.note(numbered(seq));
        }
        w.comparison_started(); // started after call KEPT: the next must keep from there
        for seq in KEPT as u32 + 1..KEPT as u32 + 3 {
            w.note(numbered(seq));
        }
        w.comparison_started();
        assert_eq!(w.keep_from(), KEPT as u64);
        // the calls kept end just before KEPT: the window starts afresh from the last call
        assert_eq!((w.first(), w.full()), (KEPT as u64 + 2, false));
        w.note(numbered(KEPT as u32 + 3));
        assert_eq!(seqs(&w), [KEPT as u32 + 2, KEPT as u32 + 3]);
    }

    #[test]
    fn the_element_type_of_the_last_call_is_noted_where_kept() {
        let mut w = Window::default();
        w.note(numbered(0));
        w.note(numbered(1));
        w.update_last(|n| n.2 = Some("f32"));
        let types: Vec<_> = w.calls().map(|n| n.2).collect();
        assert_eq!(types, [None, Some("f32")]);
    }

    fn seen(first: u64, full: bool, calls: &[(u64, &str)]) -> Seen {
        let calls = calls.iter().map(|&(f, t)| (f, t.to_string())).collect();
        Seen {
            first,
            keep_from: first,
            full,
            calls,
        }
    }

    #[test]
    fn the_first_difference_is_named_with_every_processs_view() {
        let a = seen(7, false, &[(1, "a"), (2, "b"), (3, "c")]);
        let b = seen(7, false, &[(1, "a"), (5, "x"), (3, "c")]);
        assert_eq!(
            first_difference(&[a.clone(), b]),
            Some((8, vec!["b".to_string(), "x".to_string()]))
        );
        // a call more on one process
        let c = seen(7, false, &[(1, "a"), (2, "b")]);
        assert_eq!(
            first_difference(&[a.clone(), c]),
            Some((9, vec!["c".into(), "no collective call here".into()]))
        );
        assert_eq!(first_difference(&[a.clone(), a.clone()]), None);
    }

    #[test]
    fn calls_a_window_did_not_keep_are_not_taken_for_a_difference() {
        let full = seen(0, true, &[(1, "a"), (2, "b")]);
        let more = seen(0, false, &[(1, "a"), (2, "b"), (3, "c"), (4, "d")]);
        let other = seen(0, false, &[(1, "a"), (2, "b"), (3, "c"), (9, "z")]);
        assert_eq!(first_difference(&[full.clone(), more.clone()]), None);
        let (k, views) = first_difference(&[full, more, other]).unwrap();
        assert_eq!(k, 3);
        assert!(views[0].starts_with("a call past the calls a window keeps"));
        assert_eq!(views[1..], ["d".to_string(), "z".to_string()]);
    }

    #[test]
    fn what_a_window_says_of_calls_not_kept_gives_its_size() {
        assert!(NOT_KEPT.contains(&format!("{KEPT} from")));
    }

    #[test]
    fn a_difference_found_after_calls_not_kept_says_an_earlier_one_may_differ() {
        // a process made a call more among calls not kept; both started afresh after it, one
        // number apart: the same calls (their numbers in their fingerprints) until the last
        let behind = Seen {
            keep_from: 700,
            ..seen(792, false, &[(792, "c792"), (793, "c793"), (794, "c794")])
        };
        let other = Seen {
            keep_from: 700,
            ..seen(791, false, &[(791, "c791"), (792, "c792"), (793, "c793")])
        };
        let (k, views) = first_difference(&[behind, other]).unwrap();
        assert_eq!(k, 794);
        assert!(views[0].starts_with("c794 (the first difference among the calls kept"));
        assert!(views[1].starts_with("no collective call here (the first difference among"));
        assert!(
            views[0].contains("calls #700 to #791 were not kept"),
            "{views:?}"
        );
    }
}
