//! A whole program's predicted run ([`Universe::simulate`](crate::Universe::simulate)): the
//! steps that every rank's run recorded (`trace::Step`) become one [`Schedule`] — computation,
//! sends, receives and reductions, each receive paired with the very send it matched in the
//! run — which the [`Simulator`] then times on its network: each rank's predicted finish, and a
//! Perfetto trace on the virtual clock.
//!
//! Replaying what the run did, rather than running on the virtual clock, keeps the simulation
//! deterministic (links serve messages in virtual-time order, whatever order the threads ran
//! in) and the real run free of simulation work. The price is that the run's choices stand: a
//! receive from any source takes the message that came first in the run, a loop of `test`s
//! does what it did in the run, and `rpar::wtime` reads the real clock.

use std::collections::HashMap;

use super::engine::{Report, Simulator};
use super::schedule::{Op, Schedule};
use crate::error::Warning;
use crate::trace::{Event, SpanArgs, Step};
use crate::{Error, Result};

/// What [`Universe::simulate`](crate::Universe::simulate) predicts for a program: its real
/// results, and its time on the simulated machine.
///
/// ```
/// use rpar::cost::{Network, Params, Switching};
/// use rpar::sim::Simulator;
/// // 1 us per message, 1 ns per byte, on a ring; computation counts nothing (cpu_scale 0)
/// let machine = Simulator::new(Network::ring(4), Switching::CutThrough, Params::hockney(1e-6, 1e-9))
///     .cpu_scale(0.0);
/// let run = rpar::Universe::new(4).simulate(&machine).run(|world| {
///     let right = (world.rank() + 1) % 4;
///     let left = (world.rank() + 3) % 4;
///     let mut got = [0u64; 125];
///     world.sendrecv(&[world.rank() as u64; 125], right, 0, &mut got, left, 0)?;
///     Ok(got[0])
/// })?;
/// assert_eq!(run.results, [3, 0, 1, 2]); // the program really ran
/// // one neighbour exchange of 1000 bytes: 1 us + 1000 ns
/// assert!((run.time - 2e-6).abs() < 1e-12, "{}", run.time);
/// assert_eq!(run.network.messages, 4);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Prediction<R> {
    /// Each rank's result, in rank order: the program ran for real, on real data.
    pub results: Vec<R>,
    /// What the run left behind, as in [`RunReport`](crate::RunReport): messages sent but
    /// never received (the simulation leaves them out) and receives never completed.
    pub warnings: Vec<Warning>,
    /// The predicted time of the run in seconds: when its last rank finished.
    pub time: f64,
    /// Each rank's predicted time, in rank order.
    pub ranks: Vec<RankTime>,
    /// What the network simulation found: messages, time lost to busy links, the busiest link.
    pub network: Report,
    /// Each rank's calls on the virtual clock (see [`Prediction::calls`]).
    calls: Vec<Vec<TimedCall>>,
}

/// A call of a rank's program on the virtual clock (see [`Prediction::calls`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimedCall {
    /// The call's name as a trace shows it (`send`, `allgather`, `barrier`, …).
    pub name: &'static str,
    /// When it began, in seconds of virtual time.
    pub start: f64,
    /// When it returned.
    pub end: f64,
}

/// One rank's predicted time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTime {
    /// When the rank finished, in seconds of virtual time from the start.
    pub finish: f64,
    /// Seconds of it spent computing (its CPU time outside rpar calls, times the
    /// simulator's `cpu_scale`).
    pub compute: f64,
}

impl RankTime {
    /// Seconds spent communicating or waiting for messages: the rest of its time.
    pub fn communication(&self) -> f64 {
        (self.finish - self.compute).max(0.0)
    }
}

impl<R> Prediction<R> {
    /// Rank `rank`'s calls, outermost only (a collective's inner steps are in its span), in its
    /// program's order, on the virtual clock: to time a phase of the program, take the end of
    /// the call before it and the start of the call after it.
    ///
    /// # Panics
    ///
    /// If `rank` is not a rank of the run, like indexing a slice out of bounds.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::Simulator;
    /// let machine = Simulator::new(Network::ring(2), Switching::CutThrough, Params::hockney(1e-6, 0.0))
    ///     .cpu_scale(0.0);
    /// let run = rpar::Universe::new(2).simulate(&machine).run(|world| {
    ///     world.barrier()?;
    ///     world.allreduce(&1u32, rpar::Sum)
    /// })?;
    /// let calls: Vec<&str> = run.calls(0).iter().map(|c| c.name).collect();
    /// assert_eq!(calls, ["barrier", "allreduce"]);
    /// assert!(run.calls(0)[1].start >= run.calls(0)[0].end);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn calls(&self, rank: usize) -> &[TimedCall] {
        &self.calls[rank]
    }
}

/// Where a call began or ended, among its rank's operations.
struct Mark {
    /// Index of the first operation after it.
    at: usize,
    /// `None` for a call's beginning; its end: its name if shown, what it was about if kept.
    leave: Option<(Option<&'static str>, Option<Box<SpanArgs>>)>,
}

/// A rank's run on the virtual clock, as a trace shows it.
pub(crate) type RankEvents = (usize, Vec<Event>);

/// The predicted run of a program whose ranks recorded `programs` (in rank order), with its
/// real `results` and `warnings`, on `machine`; and if `traced`, the ranks' runs on the
/// virtual clock as a trace shows them.
pub(crate) fn predict<R>(
    machine: &Simulator,
    results: Vec<R>,
    warnings: Vec<Warning>,
    programs: Vec<Vec<Step>>,
    traced: bool,
) -> Result<(Prediction<R>, Vec<RankEvents>)> {
    let n = programs.len() as u32;
    // every received message: its receiver, tag and size (the sender knows none of them)
    let mut received: HashMap<u32, (u32, i32, u64)> = HashMap::new();
    for (rank, steps) in programs.iter().enumerate() {
        for step in steps {
            if let Step::Recv { flow, tag, bytes } = *step {
                received.insert(flow, (rank as u32, tag, bytes));
            }
        }
    }
    let total: usize = programs.iter().map(Vec::len).sum();
    let mut ops = Vec::with_capacity(total);
    let mut flows = Vec::with_capacity(total);
    let mut starts = vec![0];
    let mut marks: Vec<Vec<Mark>> = Vec::with_capacity(programs.len());
    let mut sent_at: HashMap<u32, usize> = HashMap::with_capacity(received.len());
    let mut recvs: Vec<(u32, usize)> = Vec::with_capacity(received.len());
    for steps in programs {
        let mut rank_marks = Vec::new();
        for step in steps {
            let (op, flow) = match step {
                Step::Compute { ns } => (Op::Compute { ns }, 0),
                Step::Reduce { bytes } => (Op::Reduce { bytes }, 0),
                Step::Send { flow } => {
                    // a message never received is left out: nobody waits for it
                    let Some(&(to, tag, bytes)) = received.get(&flow) else {
                        continue;
                    };
                    sent_at.insert(flow, ops.len());
                    (Op::Send { to, tag, bytes }, flow)
                }
                Step::Recv { flow, tag, bytes } => {
                    recvs.push((flow, ops.len()));
                    let from = flow % n;
                    (Op::Recv { from, tag, bytes }, flow)
                }
                Step::Enter => {
                    rank_marks.push(Mark {
                        at: ops.len(),
                        leave: None,
                    });
                    continue;
                }
                Step::Leave { name, args } => {
                    rank_marks.push(Mark {
                        at: ops.len(),
                        leave: Some((name, args)),
                    });
                    continue;
                }
            };
            ops.push(op);
            flows.push(flow);
        }
        starts.push(ops.len());
        marks.push(rank_marks);
    }
    let pairs: Vec<(usize, usize)> = recvs
        .into_iter()
        .map(|(flow, recv)| {
            let send = sent_at.get(&flow).copied().ok_or_else(|| {
                Error::invalid(
                    "Universe::simulate",
                    format!("message {flow} was received but its send was not recorded"),
                )
            })?;
            Ok((send, recv))
        })
        .collect::<Result<_>>()?;
    let schedule = Schedule::matched(ops, starts, &pairs)?;
    let (network, done) = machine.run_timed(&schedule)?;
    let timeline = Timeline {
        schedule: &schedule,
        done: &done,
        flows: &flows,
    };
    let ranks = (0..schedule.ranks())
        .map(|r| RankTime {
            finish: network.finish[r],
            compute: timeline.compute(r),
        })
        .collect();
    let (calls, events) = marks
        .into_iter()
        .enumerate()
        .map(|(r, m)| timeline.calls(r, m, traced))
        .unzip();
    let prediction = Prediction {
        results,
        warnings,
        time: network.time,
        ranks,
        network,
        calls,
    };
    Ok((prediction, events))
}

/// A timed schedule: when each operation ended, and each message's flow id.
struct Timeline<'a> {
    schedule: &'a Schedule,
    done: &'a [f64],
    flows: &'a [u32],
}

impl Timeline<'_> {
    /// When operation `i` of rank `r` began (for `i` one past its last, when that ended): when
    /// the rank's previous operation ended, 0 for its first.
    fn begin(&self, r: usize, i: usize) -> f64 {
        if i == self.schedule.start(r) {
            0.0
        } else {
            self.done[i - 1]
        }
    }

    fn ops(&self, r: usize) -> std::ops::Range<usize> {
        let start = self.schedule.start(r);
        start..start + self.schedule.rank_ops(r).len()
    }

    /// Rank `r`'s seconds of computation.
    fn compute(&self, r: usize) -> f64 {
        self.ops(r)
            .filter(|&i| matches!(self.schedule.ops()[i], Op::Compute { .. }))
            .map(|i| self.done[i] - self.begin(r, i))
            .sum()
    }

    /// Rank `r`'s outermost calls on the virtual clock (from `marks`), and if `traced` its run
    /// as a trace shows it: its computation, the ends of its messages' arrows, and every call
    /// whose arguments were kept.
    fn calls(&self, r: usize, marks: Vec<Mark>, traced: bool) -> (Vec<TimedCall>, RankEvents) {
        let ns = |t: f64| (t * 1e9).round() as u64;
        let mut events = Vec::new();
        for i in self.ops(r).filter(|_| traced) {
            let (begin, end) = (self.begin(r, i), self.done[i]);
            match self.schedule.ops()[i] {
                Op::Compute { .. } => events.push(Event::Span {
                    name: "compute",
                    start_ns: ns(begin),
                    dur_ns: ns(end) - ns(begin),
                    args: SpanArgs::default(),
                }),
                Op::Send { .. } => events.push(Event::FlowOut {
                    id: self.flows[i],
                    at_ns: ns(begin),
                }),
                Op::Recv { .. } => events.push(Event::FlowIn {
                    id: self.flows[i],
                    at_ns: ns(end),
                }),
                Op::Reduce { .. } => {}
            }
        }
        let mut calls = Vec::new();
        let mut open = Vec::new();
        for mark in marks {
            let Some((name, args)) = mark.leave else {
                open.push(self.begin(r, mark.at));
                continue;
            };
            let start = open.pop().unwrap_or(0.0);
            let end = self.begin(r, mark.at);
            if let (Some(name), true) = (name, open.is_empty()) {
                calls.push(TimedCall { name, start, end });
            }
            if let (Some(name), Some(args)) = (name, args) {
                events.push(Event::Span {
                    name,
                    start_ns: ns(start),
                    dur_ns: ns(end).saturating_sub(ns(start)),
                    args: *args,
                });
            }
        }
        (calls, (r, events))
    }
}
