//! Tracing: a written Chrome trace loads as JSON with a track per rank, holding that rank's
//! spans, which nest; every message is an arrow that leaves from inside the sending call's span
//! on the sender's track and arrives, no earlier, inside the receiving call's span on the
//! receiver's track; every call of a known program is there with its peer, tag, bytes (and
//! algorithm); each run of a program writes a trace of its own, with the builder or with
//! `RPAR_TRACE`. The communication matrix counts what was sent.

use rpar::{Result, Universe};

#[cfg(feature = "trace")]
mod traced {
    use rpar::{
        Allgather, Allreduce, Bcast, Comm, Datatype, Gather, ReduceScatter, Result, Scan, Sum,
        TypeMap, Universe, ANY_SOURCE, ANY_TAG,
    };
    use serde_json::Value;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// A span of a written trace: its track (the rank), name, start and end in nanoseconds,
    /// and its args.
    #[derive(Debug, Clone)]
    struct Span {
        rank: u64,
        name: String,
        start: i64,
        end: i64,
        args: Value,
    }

    impl Span {
        /// (peer, tag, bytes), each if the span has it.
        fn about(&self) -> (Option<u64>, Option<i64>, Option<u64>) {
            (
                self.args["peer"].as_u64(),
                self.args["tag"].as_i64(),
                self.args["bytes"].as_u64(),
            )
        }

        fn is_collective(&self) -> bool {
            self.args.get("algorithm").is_some()
        }

        fn contains(&self, rank: u64, at: i64) -> bool {
            self.rank == rank && self.start <= at && at <= self.end
        }
    }

    /// One end of an arrow: its track and time in nanoseconds.
    #[derive(Debug, Clone, Copy)]
    struct End {
        rank: u64,
        at: i64,
    }

    /// A written trace, checked while it is read: known phases only, flow ids unique per end.
    #[derive(Debug)]
    struct Trace {
        tracks: BTreeSet<u64>,
        spans: Vec<Span>,
        starts: BTreeMap<u64, End>,
        ends: BTreeMap<u64, End>,
    }

    /// The calls that send a message of their own (their span must hold the arrow's tail).
    const SENDS: [&str; 7] = [
        "send",
        "send_owned",
        "send_typed",
        "sendrecv",
        "sendrecv_replace",
        "isend",
        "isend_owned",
    ];
    /// The calls in which a message can arrive.
    const RECEIVES: [&str; 9] = [
        "recv",
        "recv_typed",
        "sendrecv",
        "sendrecv_replace",
        "wait",
        "test",
        "wait_any",
        "wait_all",
        "test_all",
    ];

    fn ns(us: &Value) -> i64 {
        (us.as_f64().expect("a time in microseconds") * 1000.0).round() as i64
    }

    impl Trace {
        fn load(path: &Path) -> Trace {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            let doc: Value = serde_json::from_str(&text).expect("a trace is JSON");
            let mut t = Trace {
                tracks: BTreeSet::new(),
                spans: Vec::new(),
                starts: BTreeMap::new(),
                ends: BTreeMap::new(),
            };
            for e in doc["traceEvents"].as_array().expect("traceEvents") {
                let rank = e["tid"].as_u64();
                let id = e["id"].as_u64();
                match e["ph"].as_str().expect("every event has a phase") {
                    "M" if e["name"] == "thread_name" => {
                        t.tracks.insert(rank.expect("a track's tid"));
                    }
                    "M" => assert_eq!(e["name"], "process_name", "{e}"),
                    "X" => t.spans.push(Span {
                        rank: rank.expect("a span's tid"),
                        name: e["name"].as_str().expect("a span's name").into(),
                        start: ns(&e["ts"]),
                        end: ns(&e["ts"]) + ns(&e["dur"]),
                        args: e["args"].clone(),
                    }),
                    ph @ ("s" | "f") => {
                        let end = End {
                            rank: rank.expect("a flow's tid"),
                            at: ns(&e["ts"]),
                        };
                        let id = id.expect("a flow's id");
                        let ends = if ph == "s" {
                            &mut t.starts
                        } else {
                            // binds to the slice around it, not the next one
                            assert_eq!(e["bp"], "e", "{e}");
                            &mut t.ends
                        };
                        assert!(ends.insert(id, end).is_none(), "two {ph} of flow {id}");
                    }
                    other => panic!("an event of phase {other}: {e}"),
                }
            }
            t
        }

        /// The innermost span on `rank`'s track around time `at`.
        fn around(&self, rank: u64, at: i64) -> Option<&Span> {
            self.spans
                .iter()
                .filter(|s| s.contains(rank, at))
                .max_by_key(|s| (s.start, -s.end))
        }

        /// The spans named `name` on `rank`'s track.
        fn named(&self, rank: u64, name: &str) -> Vec<&Span> {
            self.spans
                .iter()
                .filter(|s| s.rank == rank && s.name == name)
                .collect()
        }

        /// What the spans named `name` on `rank`'s track are about, sorted.
        fn about(&self, rank: u64, name: &str) -> Vec<(Option<u64>, Option<i64>, Option<u64>)> {
            let mut about: Vec<_> = self.named(rank, name).iter().map(|s| s.about()).collect();
            about.sort();
            about
        }

        /// Checks what every trace of `ranks` ranks must be, and returns each message as the
        /// spans of its send and its receive.
        fn check(&self, ranks: u64) -> Vec<(&Span, &Span)> {
            assert_eq!(self.tracks, (0..ranks).collect(), "a track per rank");
            for rank in 0..ranks {
                let list: Vec<&Span> = self.spans.iter().filter(|s| s.rank == rank).collect();
                assert!(!list.is_empty(), "rank {rank} has no span");
                for a in &list {
                    assert!(a.start <= a.end, "{a:?}");
                    for b in &list {
                        let disjoint = a.end <= b.start || b.end <= a.start;
                        let nested = (a.start <= b.start && b.end <= a.end)
                            || (b.start <= a.start && a.end <= b.end);
                        assert!(disjoint || nested, "rank {rank}: {a:?} and {b:?} overlap");
                    }
                }
            }
            assert!(!self.starts.is_empty(), "no arrows");
            assert_eq!(
                self.starts.keys().collect::<Vec<_>>(),
                self.ends.keys().collect::<Vec<_>>(),
                "every arrow that leaves arrives, and none arrives that did not leave"
            );
            let mut messages = Vec::new();
            for (id, s) in &self.starts {
                let f = self.ends[id];
                assert!(
                    f.at >= s.at,
                    "flow {id} arrives before it leaves: {s:?} {f:?}"
                );
                let sent = self
                    .around(s.rank, s.at)
                    .unwrap_or_else(|| panic!("flow {id} leaves outside any span: {s:?}"));
                let received = self
                    .around(f.rank, f.at)
                    .unwrap_or_else(|| panic!("flow {id} arrives outside any span: {f:?}"));
                assert!(
                    SENDS.contains(&sent.name.as_str()) || sent.is_collective(),
                    "flow {id} leaves from {sent:?}"
                );
                assert!(
                    RECEIVES.contains(&received.name.as_str()) || received.is_collective(),
                    "flow {id} arrives in {received:?}"
                );
                if !sent.is_collective() {
                    // the sender's track is its rank; its call names the receiver's
                    let (to, tag, bytes) = sent.about();
                    assert_eq!(to, Some(f.rank), "flow {id}: {sent:?} -> track {}", f.rank);
                    if !received.name.starts_with("sendrecv") {
                        // (a sendrecv's span is about its send)
                        let (from, got_tag, got_bytes) = received.about();
                        assert_eq!(from, Some(s.rank), "flow {id} arrives in {received:?}");
                        assert_eq!((got_tag, got_bytes), (tag, bytes), "{sent:?} {received:?}");
                    }
                }
                messages.push((sent, received));
            }
            for sent in self
                .spans
                .iter()
                .filter(|s| SENDS.contains(&s.name.as_str()))
            {
                assert!(
                    self.starts.values().any(|s| sent.contains(s.rank, s.at)),
                    "{sent:?} has no arrow"
                );
            }
            messages
        }
    }

    /// A file name in a fresh temporary folder of this test.
    fn temp_file(test: &str, name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rpar-trace-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        dir.join(name)
    }

    /// The known program, on 4 ranks: every kind of point-to-point call, each message with a
    /// tag of its own (1-10), then collectives with explicit algorithms.
    fn every_call(w: Comm) -> Result<()> {
        let (r, p) = (w.rank(), w.size());
        // tag 1: a ring of sendrecv, 32 bytes each
        let mut left = [0u32; 8];
        w.sendrecv(
            &[r as u32; 8][..],
            (r + 1) % p,
            1,
            &mut left[..],
            (r + p - 1) % p,
            1,
        )?;
        assert_eq!(left, [((r + p - 1) % p) as u32; 8]);
        // tag 2: to rank 0, by rendezvous (80 000 bytes), eager (16) and moved (800), received
        // from any source
        match r {
            0 => {
                for _ in 1..p {
                    let (v, st) = w.recv::<u64>(ANY_SOURCE, 2)?;
                    assert_eq!(v, vec![st.source as u64; [0, 10_000, 2, 100][st.source]]);
                }
            }
            1 => w.send(&vec![1u64; 10_000][..], 0, 2)?,
            2 => w.send(&[2u64; 2][..], 0, 2)?,
            _ => w.send(vec![3u64; 100], 0, 2)?,
        }
        match r {
            0 => {
                // tag 3: a receive posted, a test that finds nothing (rank 1 answers only our
                // message), then tests until it is there; the isend waited for, complete
                let mut back = [0u16; 3];
                let mut req = w.irecv_into(&mut back[..], 1, 3)?;
                assert_eq!(req.test()?, None);
                let sent = w.isend(&[7u16; 3][..], 1, 3)?;
                while req.test()?.is_none() {}
                drop(req);
                assert_eq!(back, [8; 3]);
                sent.wait()?;
                // tag 5: from ranks 2 and 3 (any source), one by wait_any, the other by wait_all
                let (mut a, mut b) = (0u64, 0u64);
                let mut reqs = vec![
                    w.irecv_into(&mut a, ANY_SOURCE, 5)?,
                    w.irecv_into(&mut b, ANY_SOURCE, 5)?,
                ];
                rpar::wait_any(&mut reqs)?;
                rpar::wait_all(reqs)?;
                assert_eq!(a + b, 5);
                // tags 7 and 6: to rank 1, which tests for both
                w.send(&7u32, 1, 7)?;
                w.send(&6u32, 1, 6)?;
            }
            1 => {
                let mut got = [0u16; 3];
                w.irecv_into(&mut got[..], 0, 3)?.wait()?;
                w.isend(vec![8u16; 3], 0, 3)?.wait()?;
                let (mut six, mut seven) = (0u32, 0u32);
                let mut reqs = vec![
                    w.irecv_into(&mut six, 0, 6)?,
                    w.irecv_into(&mut seven, 0, 7)?,
                ];
                while rpar::test_all(&mut reqs)?.is_none() {}
                drop(reqs);
                assert_eq!((six, seven), (6, 7));
                // tag 9: probed, then received with wildcards
                let found = w.probe(2, 9)?;
                assert_eq!((found.status.source, found.bytes), (2, 8));
                let mut nine = 0u64;
                w.recv_into(&mut nine, ANY_SOURCE, ANY_TAG)?;
                assert_eq!(nine, 9);
            }
            _ => {
                // tag 4: ranks 2 and 3 swap 64 KiB in a scope (rendezvous both ways)
                let other = 5 - r;
                let out = vec![r as u8; 1 << 16];
                let mut inc = vec![0u8; 1 << 16];
                w.scope(|s| {
                    let recv = s.irecv_into(&mut inc[..], other, 4)?;
                    s.isend(&out[..], other, 4)?;
                    recv.wait()
                })?;
                assert!(inc.iter().all(|&b| b == other as u8));
                w.send(&(r as u64), 0, 5)?;
                if r == 2 {
                    // tag 10: rank 3's go (the only message to come: any tag); then tag 8 for
                    // rank 3 and tag 9 for rank 1
                    w.recv::<u8>(3, ANY_TAG)?;
                    w.send(&8u64, 3, 8)?;
                    w.send(&9u64, 1, 9)?;
                } else {
                    assert_eq!(w.iprobe(ANY_SOURCE, ANY_TAG)?, None); // rank 2 waits for the go
                    w.send(&0u8, 2, 10)?;
                    let found = loop {
                        if let Some(found) = w.iprobe(ANY_SOURCE, ANY_TAG)? {
                            break found;
                        }
                    };
                    assert_eq!(w.recv::<u64>(found.status.source, found.status.tag)?.0, [8]);
                }
            }
        }
        let sum = w
            .using(Allreduce::RecursiveDoubling)
            .allreduce(&[r as u64; 4][..], Sum)?;
        assert_eq!(sum, [6; 4]);
        let mut v = [r as u32; 2];
        w.using(Bcast::Binomial).bcast(&mut v[..], 1)?;
        assert_eq!(v, [1; 2]);
        w.barrier()
    }

    #[test]
    fn every_call_of_a_program_is_a_span_and_every_message_an_arrow() -> Result<()> {
        let path = temp_file("every-call", "trace.json");
        Universe::new(4).trace(&path).run(every_call)?;
        let t = Trace::load(&path);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
        let messages = t.check(4);

        let p2p: Vec<_> = messages
            .iter()
            .filter(|(s, _)| !s.is_collective())
            .collect();
        let mut tags: Vec<i64> = p2p.iter().map(|(s, _)| s.about().1.unwrap()).collect();
        tags.sort();
        let want = [1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10];
        assert_eq!(tags, want, "a point-to-point arrow per message");
        let by_call = |name: &str| messages.iter().filter(|(s, _)| s.name == name).count();
        // recursive doubling on 4 ranks: 2 rounds of 4 messages; binomial bcast: 3 messages
        assert_eq!((by_call("allreduce"), by_call("bcast")), (8, 3));

        let (some, none) = (Some, None::<u64>);
        for r in 0..4u64 {
            let next = (r + 1) % 4;
            assert_eq!(t.about(r, "sendrecv"), [(some(next), Some(1), some(32))]);
            let allreduce = t.named(r, "allreduce");
            assert_eq!(allreduce.len(), 1);
            assert_eq!(allreduce[0].args["algorithm"], "RecursiveDoubling");
            assert_eq!(allreduce[0].about().2, some(32));
            let bcast = t.named(r, "bcast");
            assert_eq!(bcast.len(), 1);
            assert_eq!(bcast[0].args["algorithm"], "Binomial");
            assert_eq!(
                bcast[0].about(),
                (some(1), None, some(8)),
                "root 1, 8 bytes"
            );
            assert_eq!(t.named(r, "barrier").len(), 1);
        }
        // blocking sends to rank 0 and their receives
        assert_eq!(t.about(1, "send"), [(some(0), Some(2), some(80_000))]);
        assert_eq!(t.about(3, "send_owned"), [(some(0), Some(2), some(800))]);
        let recvs = t.about(0, "recv");
        for want in [(1, 80_000), (2, 16), (3, 800)] {
            assert!(
                recvs.contains(&(some(want.0), Some(2), some(want.1))),
                "{recvs:?}"
            );
        }
        // tag 3: rank 0's posted receive, its one test that completed it (the first found
        // nothing and left no span), its isend and the wait for it
        // (a wildcard is no peer or tag; the message received fills them in)
        let irecvs = [
            (none, Some(5), none),
            (none, Some(5), none),
            (some(1), Some(3), none),
        ];
        assert_eq!(t.about(0, "irecv"), irecvs);
        assert_eq!(t.about(0, "test"), [(some(1), Some(3), some(6))]);
        assert_eq!(t.about(0, "isend"), [(some(1), Some(3), some(6))]);
        let (one, tag3) = ((some(1), Some(3), some(6)), (some(0), Some(3), some(6)));
        assert!(t.about(0, "wait").contains(&one));
        assert_eq!(t.about(1, "isend_owned"), [tag3]);
        assert_eq!(
            t.about(1, "wait"),
            [tag3, tag3],
            "the receive's wait and the send's"
        );
        // tag 5: wait_any takes one, wait_all (with a wait inside) the other
        let any = t.about(0, "wait_any");
        assert!(
            matches!(any[..], [(Some(2 | 3), Some(5), Some(8))]),
            "{any:?}"
        );
        let all = t.named(0, "wait_all");
        assert_eq!(all.len(), 1);
        let inner: Vec<_> = t
            .named(0, "wait")
            .into_iter()
            .filter(|w| all[0].start <= w.start && w.end <= all[0].end)
            .map(|w| w.about())
            .collect();
        assert_eq!(inner.len(), 1);
        assert_eq!(inner[0].1, Some(5));
        assert_ne!(inner[0].0, any[0].0, "wait_all waited for the other one");
        // tags 6 and 7: test_all, a test span for each request as the call completes it
        assert_eq!(
            t.about(1, "test"),
            [(some(0), Some(6), some(4)), (some(0), Some(7), some(4))]
        );
        let test_all = t.named(1, "test_all");
        assert!(
            (1..=2).contains(&test_all.len()),
            "only calls that completed one: {test_all:?}"
        );
        for test in t.named(1, "test") {
            assert!(test_all
                .iter()
                .any(|a| a.start <= test.start && test.end <= a.end));
        }
        // tag 4: the scope's sends and receives, and its wait for its sends
        for (r, other) in [(2, 3), (3, 2)] {
            let swap = (some(other), Some(4), some(65_536));
            assert_eq!(t.about(r, "isend"), [swap]);
            assert_eq!(t.about(r, "irecv"), [(some(other), Some(4), none)]);
            assert_eq!(t.about(r, "wait"), [swap]);
            assert_eq!(t.named(r, "scope_wait").len(), 1);
        }
        // probes: the wildcards filled in with what was found; the iprobes that found nothing
        // left no span
        assert_eq!(t.about(3, "iprobe"), [(some(2), Some(8), some(8))]);
        assert_eq!(t.about(1, "probe"), [(some(2), Some(9), some(8))]);
        // receives with wildcards: what they received
        assert_eq!(t.about(1, "recv"), [(some(2), Some(9), some(8))]);
        assert_eq!(t.about(2, "recv"), [(some(3), Some(10), some(1))]);
        assert_eq!(t.about(3, "recv"), [(some(2), Some(8), some(8))]);
        Ok(())
    }

    /// An element aligned beyond the shared-memory arena's slots (64 bytes): the shared-memory
    /// algorithms cannot take it, so `Auto` runs the message-passing rule.
    #[derive(Datatype, Clone, Copy, Debug, PartialEq)]
    #[repr(C, align(128))]
    struct Wide {
        x: f64,
    }

    /// Collectives with `Auto`, explicit algorithms, an explicit `SharedMemory` where it cannot
    /// run, and calls built on others, on 4 ranks; what `select` picks for each is in
    /// [`auto_spans_show_the_algorithm_that_ran`].
    fn auto_calls(w: Comm) -> Result<()> {
        let r = w.rank();
        assert_eq!(w.allreduce(&[r as u64; 4][..], Sum)?, [6; 4]);
        assert_eq!(w.using(Allreduce::Ring).allreduce(&(r as u64), Sum)?, 6);
        assert_eq!(w.scan(&(r as u64), Sum)?, (0..=r as u64).sum::<u64>());
        let counts = [1, 2, 1, 2];
        w.allgather((&vec![r as u8; counts[r]][..], rpar::Counts(&counts)))?;
        let big = [1 << 14; 4];
        w.allgather((&vec![r as u8; big[r]][..], rpar::Counts(&big)))?;
        w.using(Allgather::SharedMemory)
            .allgather((&vec![r as u8; counts[r]][..], rpar::Counts(&counts)))?;
        assert_eq!(w.allgather(&[r as u8; 2][..])?.len(), 8);
        let mut v = [r as u32; 3];
        w.bcast(
            rpar::Typed::new(
                &mut v,
                &TypeMap::contiguous(3, &u32::type_map())?.commit(),
                1,
            ),
            2,
        )?;
        assert_eq!(v, [2; 3]);
        let mut wide = [Wide { x: r as f64 }; 2];
        w.bcast(&mut wide[..], 3)?;
        assert_eq!(wide, [Wide { x: 3.0 }; 2]);
        assert_eq!(w.reduce_scatter(&[1u32; 8][..], Sum)?, [4, 4]);
        let mut all = [0u16; 4];
        w.gather((&(r as u16), &mut all[..]), 0)?;
        w.alltoall(vec![vec![r]; 4])?;
        w.split(Some(0), 0)?;
        w.barrier()
    }

    #[test]
    fn auto_spans_show_the_algorithm_that_ran() -> Result<()> {
        let path = temp_file("auto", "trace.json");
        Universe::new(4).trace(&path).run(auto_calls)?;
        let t = Trace::load(&path);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
        t.check(4);
        let shown = |a: &dyn std::fmt::Debug| format!("{a:?}");
        // in-process, the ranks share memory: SharedMemory where the family has it and the
        // call's form can take it; elsewhere the family's `select` for p = 4 and the call's
        // bytes (allgatherv: the mean block; 4 x 16 KiB is past the ring's 64 KiB)
        let shm = "SharedMemory";
        let want: [(&str, Vec<String>); 11] = [
            ("allreduce", vec![shm.into(), shown(&Allreduce::Ring)]),
            ("scan", vec![shown(&Scan::select(4, 8, true))]),
            (
                "allgatherv",
                vec![
                    shown(&Allgather::select(4, 1, true)),
                    shown(&Allgather::select(4, 1 << 14, true)),
                    shown(&Allgather::select(4, 1, true)), // SharedMemory asked, none for v
                ],
            ),
            // allgather's own span and that of allgather_into inside it; then the typed
            // bcast's signature check (an allgather), twice as well
            ("allgather", vec![shm.into(); 4]),
            ("bcast_typed", vec![shm.into()]),
            // the typed bcast's byte bcast, then the Wide one: 128-byte alignment
            (
                "bcast",
                vec![shm.into(), shown(&Bcast::select(4, 256, true))],
            ),
            (
                "reduce_scatter_block",
                vec![shown(&ReduceScatter::select(4, 32, true))],
            ),
            ("gather", vec![shown(&Gather::select(4, 2, true))]),
            ("alltoall_owned", vec!["Linear".into()]),
            ("split", vec!["GatherAtRank0".into()]),
            ("barrier", vec![shm.into()]),
        ];
        for r in 0..4 {
            for (name, algorithms) in &want {
                let mut got: Vec<&str> = t
                    .named(r, name)
                    .iter()
                    .map(|s| s.args["algorithm"].as_str().expect("an algorithm"))
                    .collect();
                let mut algorithms: Vec<&str> = algorithms.iter().map(String::as_str).collect();
                got.sort();
                algorithms.sort();
                assert_eq!(got, algorithms, "rank {r}: {name}");
            }
            let calls: usize = want.iter().map(|(_, a)| a.len()).sum();
            let collective = t.spans.iter().filter(|s| s.rank == r && s.is_collective());
            assert_eq!(
                collective.count(),
                calls,
                "rank {r}: no other collective span"
            );
        }
        Ok(())
    }

    /// A program that sends one message with `tag` around a ring and receives it.
    fn ring(tag: i32) -> impl Fn(Comm) -> Result<()> + Sync {
        move |w: Comm| {
            let (r, p) = (w.rank(), w.size());
            w.send(&[r as u8; 3][..], (r + 1) % p, tag)?;
            w.recv::<u8>((r + p - 1) % p, tag)?;
            w.using(Allreduce::Ring).allreduce(&1u64, Sum)?;
            Ok(())
        }
    }

    /// Checks that `path` holds a trace of `ring(tag)` on `ranks` ranks.
    fn check_ring(path: &Path, ranks: u64, tag: i64) {
        let t = Trace::load(path);
        t.check(ranks);
        for r in 0..ranks {
            assert_eq!(
                t.about(r, "send"),
                [(Some((r + 1) % ranks), Some(tag), Some(3))],
                "{path:?}"
            );
            assert_eq!(t.named(r, "allreduce").len(), 1);
        }
    }

    #[test]
    fn each_run_writes_a_trace_of_its_own() -> Result<()> {
        let path = temp_file("each-run", "trace.json");
        let u = Universe::new(3).trace(&path);
        u.run(ring(1))?;
        u.run(ring(2))?;
        Universe::new(2).trace(&path).run(ring(3))?;
        check_ring(&path, 3, 1);
        check_ring(&path.with_file_name("trace.2.json"), 3, 2);
        check_ring(&path.with_file_name("trace.3.json"), 2, 3);
        let files = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
        assert_eq!(files, 3);
        Ok(())
    }

    /// The library's own message exchanges outside the collectives — the cost model's
    /// calibration, the simulator's reference algorithms run on real data, the distributed
    /// graph's agreement check — are collective calls too: each is a span on every rank, and
    /// every arrow leaves and arrives inside one (a calibration's trace used to hold its
    /// arrows on empty tracks).
    #[test]
    fn library_exchanges_are_spans_that_hold_their_arrows() -> Result<()> {
        let path = temp_file("library", "trace.json");
        Universe::new(3).trace(&path).run(|w| {
            rpar::cost::calibrate_sizes(&w, &[0, 64, 1024], 2)?;
            rpar::sim::Reference::RingAllgather.run(&w, 8)?;
            let (r, p) = (w.rank(), w.size());
            rpar::DistGraphComm::dist_graph_create_adjacent(
                &w,
                &[(r + p - 1) % p],
                &[(r + 1) % p],
                false,
            )?;
            Ok(())
        })?;
        let t = Trace::load(&path);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
        let messages = t.check(3);
        for (name, algorithm) in [
            ("calibrate", "PingPong"),
            ("allgather", "ReferenceRingAllgather"),
            ("dist_graph_create_adjacent", "GatherAtRank0"),
        ] {
            for r in 0..3 {
                let spans = t.named(r, name);
                assert_eq!(spans.len(), 1, "rank {r}: {name}");
                assert_eq!(spans[0].args["algorithm"], algorithm, "{:?}", spans[0]);
            }
            assert!(
                messages.iter().any(|(sent, _)| sent.name == name),
                "no arrow leaves a {name} span"
            );
        }
        Ok(())
    }

    /// Run by `rpar_trace_names_the_file_of_each_run` as a child process, with `RPAR_TRACE`
    /// set (environment variables are the whole process's: set here, they would trace the
    /// other tests' runs too).
    #[test]
    #[ignore = "a child process of rpar_trace_names_the_file_of_each_run"]
    fn two_runs_under_rpar_trace() -> Result<()> {
        if std::env::var_os("RPAR_TRACE").is_none() {
            return Ok(()); // run without its parent: nothing to trace to
        }
        Universe::new(3).run(ring(4))?;
        Universe::new(4).run(ring(5))?;
        Ok(())
    }

    #[test]
    fn rpar_trace_names_the_file_of_each_run() {
        let path = temp_file("env", "env.json");
        let out = Command::new(std::env::current_exe().expect("this test's binary"))
            .args(["traced::two_runs_under_rpar_trace", "--exact", "--ignored"])
            .env("RPAR_TRACE", &path)
            .output()
            .expect("the test binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}"
        );
        check_ring(&path, 3, 4);
        check_ring(&path.with_file_name("env.2.json"), 4, 5);
        let files = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
        assert_eq!(files, 2);
    }
}

#[test]
fn the_matrix_counts_point_to_point_and_collective_traffic() -> Result<()> {
    let report = Universe::new(3).record_matrix(true).run_report(|w| {
        if w.rank() == 1 {
            w.send(&[1u16; 50][..], 2, 0)?;
        }
        if w.rank() == 2 {
            w.recv::<u16>(1, 0)?;
        }
        Ok(())
    })?;
    let m = report.matrix.expect("matrix recorded");
    assert_eq!((m.messages(1, 2), m.bytes(1, 2)), (1, 100));
    assert_eq!(m.total_messages(), 1);
    let table = m.to_string();
    assert!(table.contains("100 (1)"), "{table}");
    Ok(())
}
