//! The discrete-event simulator: executes a [`Schedule`] on a modeled [`Network`].
//!
//! # Model
//!
//! * Rank r runs on node `placement[r]` (identity by default) and executes its operations in
//!   order, with its own clock.
//! * **Send** of m bytes at clock c: the sender pays the startup t_n, then the message enters
//!   the network at c + t_n. Sends are eager: they never wait for the receiver. The sender
//!   continues when the message's tail has left its first link (one port per message: a rank
//!   does not overlap its own sends).
//! * **Links** are directed and carry one message at a time (full duplex: the two directions
//!   are separate). A message that finds its link busy waits: messages sharing a link slow each
//!   other down — the lecture's channel overload.
//! * **Store-and-forward**: at each hop the message waits for the link, then occupies it for
//!   t_s + m t_c; it arrives when the last hop is done. Uncontended: t_n + (t_s + m t_c) l.
//! * **Cut-through**: the header reserves the path as it goes, t_s per hop, and the body
//!   streams behind it: the message starts at the earliest S >= c + t_n at which each link k of
//!   its route is free by S + k t_s; link k is then busy until S + (k+1) t_s + m t_c, and the
//!   message arrives at S + l t_s + m t_c. Uncontended: t_n + l t_s + m t_c.
//! * **Receive**: completes at max(clock, arrival of the matched send).
//! * **Reduce** of b bytes: the clock advances by b gamma.
//! * **Compute** of t ns of this machine's CPU time: the clock advances by t times the
//!   simulator's [`cpu_scale`](Simulator::cpu_scale) (1 unless set).
//!
//! Events are processed in time order (ties in the order they were created), so a link
//! serves messages first come, first served; the run is deterministic.
//!
//! # Where it disagrees with the closed forms
//!
//! * Store-and-forward broadcast on ring and torus: the lecture's formula assumes a
//!   network-level multicast (one startup in all); a relaying program pays one per hop. The
//!   simulator is right for programs, the formula for multicast hardware (`cost::lecture`).
//! * Many-to-one steps (the linear gather): the simulator's endpoints are not a resource, the
//!   formulas assume a one-port receiver (`cost::Algorithm`); the formula is the better model of
//!   rpar's transport, where the receiver copies every message.
//! * All-to-all on a ring, direct schedule (step j: send to r + j the shorter way round): with
//!   cut-through the messages of a step hold overlapping paths and wait for each other — the
//!   lecture's channel overload. With store-and-forward the same schedule pipelines hop by hop:
//!   link k is taken by the message k hops behind exactly when the previous one leaves it, so
//!   nobody waits, yet every link carries about p^2/8 messages and step j costs
//!   t_n + min(j, p-j)(t_s + m t_c). Summed, about (p-1) t_n + (p^2/4)(t_s + m t_c): half the
//!   lecture's ring algorithm's m t_c p(p-1)/2, because it uses both directions of the ring.
//!   Both figures are right; they describe different programs (test
//!   `alltoall_congests_a_ring_but_not_a_fully_connected_network`).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::schedule::{Op, Schedule};
use crate::cost::{Network, Params, Switching};
use crate::{Error, Result};

/// A network, a switching technique and machine constants to simulate schedules on.
///
/// ```
/// use rpar::cost::{Network, Params, Switching};
/// use rpar::sim::{Reference, Simulator};
/// let params = Params::new(4.0, 1.0, 0.25, 0.0);
/// let sim = Simulator::new(Network::hypercube(4), Switching::StoreAndForward, params);
/// let report = sim.run(&Reference::BinomialBcast.record(16, 8)?)?;
/// assert_eq!(report.time, 4.0 * (4.0 + 1.0 + 8.0 * 0.25)); // log2 p (t_n + t_s + m t_c)
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Simulator {
    network: Network,
    switching: Switching,
    params: Params,
    placement: Option<Vec<usize>>,
    cpu_scale: f64,
}

/// What a simulation found.
///
/// ```
/// use rpar::cost::{Network, Params, Switching};
/// use rpar::sim::{Reference, Simulator};
/// let params = Params::new(1.0, 0.0, 0.0, 0.0); // count startups only
/// let sim = Simulator::new(Network::ring(8), Switching::CutThrough, params);
/// let report = sim.run(&Reference::RingAllgather.record(8, 4)?)?;
/// assert_eq!(report.time, 7.0); // p - 1 steps
/// assert_eq!(report.finish, vec![7.0; 8]);
/// assert_eq!((report.messages, report.max_link_load), (56, 7)); // each link carries p - 1
/// assert_eq!(report.link_wait, 0.0);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// When the last rank finished (the collective's time).
    pub time: f64,
    /// When each rank finished.
    pub finish: Vec<f64>,
    /// Number of messages.
    pub messages: usize,
    /// Total time messages spent waiting for busy links (0 when contention-free).
    pub link_wait: f64,
    /// The most messages that crossed any one link.
    pub max_link_load: usize,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// The rank continues its program.
    Resume(usize),
    /// Store-and-forward: send `op` is at node `at`, wanting its next link.
    Hop { op: usize, at: usize },
    /// Cut-through: send `op` enters the network.
    Inject { op: usize },
}

#[derive(Debug)]
struct Event {
    time: f64,
    seq: u64,
    kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed, so that the max-heap pops the earliest event first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.total_cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct LinkState {
    free_at: f64,
    load: usize,
}

/// The state of one run.
struct Run<'a> {
    sim: &'a Simulator,
    schedule: &'a Schedule,
    events: BinaryHeap<Event>,
    seq: u64,
    pc: Vec<usize>,
    end: Vec<usize>,
    clock: Vec<f64>,
    blocked: Vec<bool>,
    finish: Vec<f64>,
    /// Arrival time of each send (NaN until known).
    arrival: Vec<f64>,
    /// When each operation ended (NaN until known).
    done: Vec<f64>,
    links: HashMap<(usize, usize), LinkState>,
    link_wait: f64,
    route: Vec<(usize, usize)>,
}

impl Simulator {
    /// A simulator for `network` with `switching` and `params`; rank r runs on node r unless
    /// [`with_placement`](Simulator::with_placement) says otherwise.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Reference, Simulator};
    /// let params = Params::new(1.0, 0.5, 0.25, 0.0);
    /// let schedule = Reference::BinomialBcast.record(16, 4)?;
    /// let sf = Simulator::new(Network::hypercube(4), Switching::StoreAndForward, params);
    /// let ct = Simulator::new(Network::hypercube(4), Switching::CutThrough, params);
    /// // binomial partners are hypercube neighbours: one hop each, so both switchings agree
    /// assert_eq!(sf.run(&schedule)?.time, 4.0 * (1.0 + 0.5 + 1.0));
    /// assert_eq!(ct.run(&schedule)?.time, sf.run(&schedule)?.time);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn new(network: Network, switching: Switching, params: Params) -> Self {
        Simulator {
            network,
            switching,
            params,
            placement: None,
            cpu_scale: 1.0,
        }
    }

    /// How long the simulated machine's cores take for what one core of this machine does in
    /// one second of CPU time: 2.0 for cores half as fast, 0.5 for twice as fast, 0.0 to count
    /// communication only. It scales the [`Op::Compute`] steps that
    /// [`Universe::simulate`](crate::Universe::simulate) measures; 1 by default.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Op, Schedule, Simulator};
    /// let sim = Simulator::new(Network::ring(2), Switching::CutThrough, Params::hockney(1.0, 0.0));
    /// let work = Schedule::new(vec![vec![Op::Compute { ns: 1_000_000_000 }], vec![]])?;
    /// assert_eq!(sim.run(&work)?.time, 1.0);
    /// assert_eq!(sim.cpu_scale(2.5).run(&work)?.time, 2.5);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn cpu_scale(mut self, factor: f64) -> Self {
        self.cpu_scale = factor;
        self
    }

    /// The network simulated.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// The machine constants.
    pub fn params(&self) -> Params {
        self.params
    }

    /// Places rank r on node `placement[r]` (for example the Gray-code embedding of a ring in a
    /// hypercube, `(0..p).map(rpar::gray_code)`). [`Simulator::run`] checks the placement.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Reference, Simulator};
    /// let params = Params::new(1.0, 0.5, 0.25, 0.0);
    /// let ring = Reference::RingAllgather.record(16, 64)?;
    /// let cube = Simulator::new(Network::hypercube(4), Switching::StoreAndForward, params);
    /// let identity = cube.run(&ring)?;
    /// let embedded = cube.clone().with_placement((0..16).map(rpar::gray_code).collect()).run(&ring)?;
    /// // Gray-code placement: every ring neighbour is a cube neighbour, one hop per message
    /// assert_eq!(embedded.time, 15.0 * (1.0 + 0.5 + 64.0 * 0.25));
    /// assert!(embedded.time < identity.time); // rank 7 -> 8 is 4 hops without it
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn with_placement(mut self, placement: Vec<usize>) -> Self {
        self.placement = Some(placement);
        self
    }

    fn node_of(&self, rank: usize) -> usize {
        self.placement.as_ref().map_or(rank, |p| p[rank])
    }

    /// Simulates `schedule`. Errors when the network has fewer nodes than the schedule has ranks
    /// (or the placement names a missing node), or when the schedule deadlocks (a cycle of
    /// receives that no send can break).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] in each of those cases.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Op, Schedule, Simulator};
    /// let sim = Simulator::new(Network::ring(4), Switching::CutThrough, Params::hockney(1.0, 0.0));
    /// let schedule = rpar::sim::Reference::RingAllgather.record(4, 8)?;
    /// assert_eq!(sim.run(&schedule)?.time, 3.0);
    /// // too many ranks for the network
    /// assert!(sim.run(&rpar::sim::Reference::RingAllgather.record(5, 8)?).is_err());
    /// // both ranks receive first: a deadlock
    /// let stuck = Schedule::new(vec![
    ///     vec![Op::Recv { from: 1, tag: 0, bytes: 8 }, Op::Send { to: 1, tag: 0, bytes: 8 }],
    ///     vec![Op::Recv { from: 0, tag: 0, bytes: 8 }, Op::Send { to: 0, tag: 0, bytes: 8 }],
    /// ])?;
    /// assert!(sim.run(&stuck).unwrap_err().to_string().contains("deadlocks"));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn run(&self, schedule: &Schedule) -> Result<Report> {
        Ok(self.run_timed(schedule)?.0)
    }

    /// [`Simulator::run`], and when each operation of the schedule ended (indexed as
    /// `Schedule::ops`): a send when its sender could go on, a receive when it completed.
    pub(crate) fn run_timed(&self, schedule: &Schedule) -> Result<(Report, Vec<f64>)> {
        const CALL: &str = "sim::Simulator::run";
        let p = schedule.ranks();
        let nodes = self.network.nodes();
        match &self.placement {
            Some(pl) if pl.len() != p || pl.iter().any(|&n| n >= nodes) => {
                return Err(Error::invalid(
                    CALL,
                    format!("expected a placement of {p} ranks on nodes 0..{nodes}, got {pl:?}"),
                ))
            }
            None if p > nodes => {
                return Err(Error::invalid(
                    CALL,
                    format!("the schedule has {p} ranks but the network only {nodes} nodes"),
                ))
            }
            _ => {}
        }
        let mut run = Run {
            sim: self,
            schedule,
            events: BinaryHeap::new(),
            seq: 0,
            pc: (0..p).map(|r| schedule.start(r)).collect(),
            end: (0..p)
                .map(|r| schedule.start(r) + schedule.rank_ops(r).len())
                .collect(),
            clock: vec![0.0; p],
            blocked: vec![false; p],
            finish: vec![f64::NAN; p],
            arrival: vec![f64::NAN; schedule.ops().len()],
            done: vec![f64::NAN; schedule.ops().len()],
            links: HashMap::new(),
            link_wait: 0.0,
            route: Vec::new(),
        };
        for r in 0..p {
            run.push(0.0, Kind::Resume(r));
        }
        while let Some(ev) = run.events.pop() {
            match ev.kind {
                Kind::Resume(r) => run.resume(r, ev.time),
                Kind::Hop { op, at } => run.hop(op, at, ev.time),
                Kind::Inject { op } => run.inject(op, ev.time),
            }
        }
        if let Some(r) = (0..p).find(|&r| run.pc[r] < run.end[r]) {
            let i = run.pc[r];
            return Err(Error::invalid(
                CALL,
                format!(
                    "the schedule deadlocks: rank {r} waits forever at its operation {} ({:?})",
                    i - schedule.start(r),
                    schedule.ops()[i]
                ),
            ));
        }
        let time = run.finish.iter().copied().fold(0.0, f64::max);
        let report = Report {
            time,
            finish: run.finish,
            messages: schedule.messages(),
            link_wait: run.link_wait,
            max_link_load: run.links.values().map(|l| l.load).max().unwrap_or(0),
        };
        Ok((report, run.done))
    }
}

impl Run<'_> {
    fn push(&mut self, time: f64, kind: Kind) {
        self.seq += 1;
        self.events.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }

    fn bytes_of(&self, op: usize) -> f64 {
        match self.schedule.ops()[op] {
            Op::Send { bytes, .. } => bytes as f64,
            _ => 0.0,
        }
    }

    fn dest_node(&self, op: usize) -> usize {
        match self.schedule.ops()[op] {
            Op::Send { to, .. } => self.sim.node_of(to as usize),
            _ => unreachable!("only sends travel"),
        }
    }

    /// Rank `r` continues at `now`: runs operations until it must wait.
    fn resume(&mut self, r: usize, now: f64) {
        self.clock[r] = self.clock[r].max(now);
        let Params { t_n, gamma, .. } = self.sim.params;
        while self.pc[r] < self.end[r] {
            let i = self.pc[r];
            match self.schedule.ops()[i] {
                Op::Reduce { bytes } => {
                    self.pc[r] += 1;
                    let t = self.clock[r] + bytes as f64 * gamma;
                    self.done[i] = t;
                    self.push(t, Kind::Resume(r));
                    return;
                }
                Op::Compute { ns } => {
                    self.pc[r] += 1;
                    let t = self.clock[r] + ns as f64 * 1e-9 * self.sim.cpu_scale;
                    self.done[i] = t;
                    self.push(t, Kind::Resume(r));
                    return;
                }
                Op::Send { to, .. } => {
                    self.pc[r] += 1;
                    let (from, dest) = (self.sim.node_of(r), self.sim.node_of(to as usize));
                    let start = self.clock[r] + t_n;
                    if from == dest {
                        // Same node: no network, the startup is all.
                        self.done[i] = start;
                        self.arrived(i, start);
                        self.push(start, Kind::Resume(r));
                    } else if self.sim.switching == Switching::StoreAndForward {
                        self.push(start, Kind::Hop { op: i, at: from });
                    } else {
                        self.push(start, Kind::Inject { op: i });
                    }
                    return;
                }
                Op::Recv { .. } => {
                    let arrival = self.arrival[self.schedule.partner(i)];
                    if arrival.is_nan() {
                        self.blocked[r] = true;
                        return;
                    }
                    self.pc[r] += 1;
                    self.done[i] = arrival.max(self.clock[r]);
                    if arrival > self.clock[r] {
                        self.push(arrival, Kind::Resume(r));
                        return;
                    }
                }
            }
        }
        self.finish[r] = self.clock[r];
    }

    /// Send `op` has arrived at `time`: wake its receiver if it waits for it.
    fn arrived(&mut self, op: usize, time: f64) {
        self.arrival[op] = time;
        let recv = self.schedule.partner(op);
        let q = self.schedule.owner(recv);
        if self.blocked[q] && self.pc[q] == recv {
            self.blocked[q] = false;
            self.push(time, Kind::Resume(q));
        }
    }

    fn take_link(&mut self, link: (usize, usize), wanted: f64, busy_until: f64) {
        let state = self.links.entry(link).or_default();
        debug_assert!(state.free_at <= wanted + 1e-12 * wanted.abs().max(1.0));
        state.free_at = busy_until;
        state.load += 1;
    }

    /// Store-and-forward: send `op` at node `at` at `now` takes its next link.
    fn hop(&mut self, op: usize, at: usize, now: f64) {
        let Params { t_s, t_c, .. } = self.sim.params;
        let dest = self.dest_node(op);
        let next = self.sim.network.next_hop(at, dest);
        let free = self.links.get(&(at, next)).map_or(0.0, |l| l.free_at);
        let start = now.max(free);
        self.link_wait += start - now;
        let done = start + t_s + self.bytes_of(op) * t_c;
        self.take_link((at, next), start, done);
        let sender = self.schedule.owner(op);
        if at == self.sim.node_of(sender) {
            self.done[op] = done;
            self.push(done, Kind::Resume(sender));
        }
        if next == dest {
            self.arrived(op, done);
        } else {
            self.push(done, Kind::Hop { op, at: next });
        }
    }

    /// Cut-through: send `op` enters the network at `now` and reserves its whole route.
    fn inject(&mut self, op: usize, now: f64) {
        let Params { t_s, t_c, .. } = self.sim.params;
        let sender = self.schedule.owner(op);
        let (from, dest) = (self.sim.node_of(sender), self.dest_node(op));
        let mut route = std::mem::take(&mut self.route);
        route.clear();
        self.sim
            .network
            .for_each_hop(from, dest, |l| route.push((l.from, l.to)));
        let start = route.iter().enumerate().fold(now, |s, (k, link)| {
            let free = self.links.get(link).map_or(0.0, |l| l.free_at);
            s.max(free - k as f64 * t_s)
        });
        self.link_wait += start - now;
        let body = self.bytes_of(op) * t_c;
        for (k, &link) in route.iter().enumerate() {
            let header = start + k as f64 * t_s;
            self.take_link(link, header, header + t_s + body);
        }
        let hops = route.len() as f64;
        self.route = route;
        self.done[op] = start + t_s + body;
        self.push(start + t_s + body, Kind::Resume(sender));
        self.arrived(op, start + hops * t_s + body);
    }
}
