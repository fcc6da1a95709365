//! The cost model: closed forms at hand-computed points, the algorithms' alpha-beta-gamma
//! counts, the lecture's isoefficiency numbers, the least-squares fit and calibration.

use rpar::cost::{
    calibrate, calibrate_sizes, efficiency, fit_line, isoefficiency_constant, lecture, speedup,
    total_overhead, Algorithm, Network, Params, ScalingModel, SumOfNumbers, Switching,
};

const SF: Switching = Switching::StoreAndForward;
const CT: Switching = Switching::CutThrough;

#[test]
fn sum_of_numbers_isoefficiency_matches_the_lecture() {
    let sum = SumOfNumbers;
    // T_0 = p log2 p.
    assert_eq!(sum.overhead(1000.0, 16), 64.0);
    assert_eq!(total_overhead(1000.0, 1000.0 / 16.0 + 4.0, 16), 64.0);
    // At p = 16 and E = 0.5, n must be at least 64.
    assert_eq!(isoefficiency_constant(0.5).unwrap(), 1.0);
    assert_eq!(sum.min_problem_size(0.5, 16).unwrap(), 64);
    assert!(sum.efficiency(63.0, 16) < 0.5 && sum.efficiency(64.0, 16) == 0.5);
    let w16 = sum.isoefficiency(0.5, 16).unwrap();
    let w32 = sum.isoefficiency(0.5, 32).unwrap();
    assert!((w16 - 64.0).abs() < 1e-9, "{w16}");
    assert!((w32 - 160.0).abs() < 1e-9, "{w32}");
    // Going from 16 to 32 ranks needs n to grow 2.5 times.
    assert!((w32 / w16 - 2.5).abs() < 1e-12);
    assert_eq!(sum.min_problem_size(0.5, 32).unwrap(), 160);
    // E = 0.8 needs K = 4: n = 4 p log2 p.
    assert_eq!(sum.min_problem_size(0.8, 16).unwrap(), 256);
    assert_eq!(speedup(64.0, 8.0), 8.0);
    assert_eq!(efficiency(64.0, 8.0, 16), 0.5);
    assert!(isoefficiency_constant(1.0).is_err() && isoefficiency_constant(0.0).is_err());
}

/// A model whose overhead grows with W: T_0 = sqrt(W) p. Isoefficiency still solves
/// W = K T_0(W, p): W = K^2 p^2.
#[test]
fn isoefficiency_solves_overheads_that_depend_on_the_problem_size() {
    struct SqrtOverhead;
    impl ScalingModel for SqrtOverhead {
        fn serial_time(&self, w: f64) -> f64 {
            w
        }
        fn parallel_time(&self, w: f64, p: usize) -> f64 {
            w / p as f64 + w.sqrt()
        }
    }
    for p in [2usize, 16, 100] {
        let w = SqrtOverhead.isoefficiency(0.75, p).unwrap();
        let want = (3.0 * p as f64).powi(2);
        assert!((w - want).abs() < 1e-6 * want, "p = {p}: {w} vs {want}");
    }
}

#[test]
fn point_to_point_and_diameters() {
    let p = Params::new(5.0, 1.0, 0.5, 0.0);
    assert_eq!(p.point_to_point(10, 4, SF), 5.0 + (5.0 + 1.0) * 4.0);
    assert_eq!(p.point_to_point(10, 4, CT), 5.0 + 5.0 + 4.0);
    assert_eq!(Network::ring(9).diameter(), 4);
    assert_eq!(Network::torus(8, 8).diameter(), 8); // 2 floor(sqrt(p)/2)
    assert_eq!(Network::torus(5, 5).diameter(), 4);
    assert_eq!(Network::hypercube(10).diameter(), 10);
    assert_eq!(Network::mesh(4, 4).diameter(), 6);
    assert_eq!(
        p.worst_point_to_point(10, &Network::hypercube(3), CT),
        5.0 + 5.0 + 3.0
    );
}

#[test]
fn lecture_formulas_at_hand_computed_points() {
    // t_s = 0 gives the lecture's forms exactly.
    let q = Params::new(3.0, 0.0, 0.5, 0.25);
    let (m, ring16, torus16, cube16) = (
        8,
        Network::ring(16),
        Network::torus(4, 4),
        Network::hypercube(4),
    );
    let mtc = 4.0;
    let bcast = |n: &Network, sw| lecture::one_to_all_broadcast(&q, n, sw, m).unwrap();
    assert_eq!(bcast(&ring16, SF), 3.0 + mtc * 8.0);
    assert_eq!(bcast(&torus16, SF), 3.0 + 2.0 * mtc * 2.0);
    assert_eq!(bcast(&cube16, SF), (3.0 + mtc) * 4.0);
    assert_eq!(bcast(&ring16, CT), (3.0 + mtc) * 4.0);
    let a2a = |n: &Network| lecture::all_to_all_broadcast(&q, n, SF, m).unwrap();
    assert_eq!(a2a(&ring16), (3.0 + mtc) * 15.0);
    assert_eq!(a2a(&torus16), 2.0 * 3.0 * 3.0 + mtc * 15.0);
    assert_eq!(a2a(&cube16), 3.0 * 4.0 + mtc * 15.0);
    assert_eq!(
        lecture::scatter(&q, &cube16, m).unwrap(),
        3.0 * 4.0 + mtc * 15.0
    );
    let pers = |n: &Network, sw| lecture::all_to_all_personalized(&q, n, sw, m).unwrap();
    assert_eq!(pers(&ring16, SF), (3.0 + mtc * 8.0) * 15.0);
    assert_eq!(pers(&torus16, SF), (6.0 + mtc * 16.0) * 3.0);
    assert_eq!(pers(&cube16, SF), (3.0 + mtc * 8.0) * 4.0);
    assert_eq!(pers(&cube16, CT), (3.0 + mtc) * 15.0);
    assert_eq!(
        lecture::all_reduce(&q, &cube16, m).unwrap(),
        (3.0 + mtc + 2.0) * 4.0
    );
    assert_eq!(
        lecture::prefix_sums(&q, &cube16, m).unwrap(),
        (3.0 + mtc + 4.0) * 4.0
    );
    // q-shift on a 4 x 4 torus: q = 5 is one row step, one compensation... none (a = 1, b = 1).
    let shift = |n: &Network, sw, s| lecture::circular_shift(&q, n, sw, m, s).unwrap();
    assert_eq!(shift(&torus16, SF, 5), (3.0 + mtc) * 3.0);
    assert_eq!(shift(&torus16, SF, 8), (3.0 + mtc) * 2.0);
    assert!((1..16).all(|s| shift(&torus16, SF, s) <= (3.0 + mtc) * 5.0)); // (sqrt p + 1)
    assert!((1..16).all(|s| shift(&cube16, SF, s) <= (3.0 + mtc) * 7.0)); // 2 log2 p - 1
    assert_eq!(shift(&cube16, SF, 1), 3.0 + mtc);
    assert_eq!(shift(&cube16, SF, 6), (3.0 + mtc) * 4.0);
    // N-body gather, both schemes.
    assert_eq!(lecture::nbody_gather_ring(&q, 16, m), 15.0 * (3.0 + mtc));
    assert_eq!(
        lecture::nbody_gather_doubling(&q, 16, m),
        3.0 * 4.0 + 15.0 * mtc
    );
    // Networks without a closed form say so.
    let err = lecture::one_to_all_broadcast(&q, &Network::mesh(4, 4), SF, m).unwrap_err();
    assert!(err.to_string().contains("no closed form"), "{err}");
    assert!(lecture::all_to_all_broadcast(&q, &Network::torus(2, 8), SF, m).is_err());
    assert!(lecture::one_to_all_broadcast(&q, &Network::ring(12), CT, m).is_err());
}

#[test]
fn algorithm_costs() {
    let c = |a: Algorithm, p, m| a.cost(p, m).unwrap();
    let bc = c(Algorithm::BinomialBcast, 10, 100);
    assert_eq!((bc.messages, bc.bytes), (4.0, 400.0));
    let vdg = c(Algorithm::VanDeGeijnBcast, 8, 800);
    assert_eq!((vdg.messages, vdg.bytes), (3.0 + 7.0, 2.0 * 700.0));
    let rab = c(Algorithm::RabenseifnerAllreduce, 8, 800);
    assert_eq!((rab.messages, rab.bytes, rab.reduced), (6.0, 1400.0, 700.0));
    let rab6 = c(Algorithm::RabenseifnerAllreduce, 6, 800);
    assert_eq!(
        (rab6.messages, rab6.bytes, rab6.reduced),
        (6.0, 1200.0 + 1600.0, 600.0 + 800.0)
    );
    let ring = c(Algorithm::RingAllreduce, 4, 400);
    assert_eq!(
        (ring.messages, ring.bytes, ring.reduced),
        (6.0, 600.0, 300.0)
    );
    let bruck = c(Algorithm::BruckAlltoall, 8, 10);
    assert_eq!((bruck.messages, bruck.bytes), (3.0, 3.0 * 4.0 * 10.0));
    let bruck5 = c(Algorithm::BruckAlltoall, 5, 10); // bit 0: 1,3; bit 1: 2,3; bit 2: 4
    assert_eq!((bruck5.messages, bruck5.bytes), (3.0, 50.0));
    assert_eq!(c(Algorithm::DisseminationBarrier, 9, 0).messages, 4.0);
    assert_eq!(c(Algorithm::LinearGather, 9, 5).bytes, 40.0);
    assert!(Algorithm::RecursiveDoublingAllgather.cost(6, 1).is_err());
    assert!(Algorithm::BinomialBcast.cost(0, 1).is_err());
    // Every algorithm costs nothing on one rank and grows with p.
    let params = Params::new(1.0, 0.0, 0.001, 0.0005);
    for alg in Algorithm::ALL {
        assert_eq!(alg.time(&params, 1, 1000).unwrap(), 0.0, "{alg:?}");
        assert!(alg.time(&params, 16, 1000).unwrap() > alg.time(&params, 4, 1000).unwrap());
    }
    // The model explains a selector: for small messages recursive doubling beats the ring,
    // for large ones Rabenseifner beats recursive doubling.
    let t = |a: Algorithm, m| a.time(&params, 64, m).unwrap();
    assert!(t(Algorithm::RecursiveDoublingAllreduce, 8) < t(Algorithm::RingAllreduce, 8));
    assert!(
        t(Algorithm::RabenseifnerAllreduce, 1 << 20)
            < t(Algorithm::RecursiveDoublingAllreduce, 1 << 20)
    );
}

#[test]
fn least_squares_fit() {
    let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 2.0 + 0.5 * i as f64)).collect();
    let (a, b, r2) = fit_line(&pts);
    assert!((a - 2.0).abs() < 1e-12 && (b - 0.5).abs() < 1e-12 && (r2 - 1.0).abs() < 1e-12);
    let noisy = [(0.0, 1.0), (1.0, 3.0), (2.0, 2.0), (3.0, 5.0)];
    let (_, _, r2) = fit_line(&noisy);
    assert!(r2 > 0.0 && r2 < 1.0, "{r2}");
}

#[test]
fn calibration_measures_this_transport() {
    // timings on a shared 2-core machine can be swamped by another process for a moment: up
    // to 5 calibrations, the first whose fit has a positive slope counts
    let measure = || {
        rpar::run(3, |world| {
            calibrate_sizes(&world, &[0, 1 << 18, 1 << 20, 1 << 21], 5)
        })
        .unwrap()
    };
    let mut cals = measure();
    for _ in 0..4 {
        if cals[0].beta > 0.0 {
            break;
        }
        cals = measure();
    }
    assert!(
        cals.iter().all(|c| *c == cals[0]),
        "every rank gets rank 0's figures"
    );
    let c = &cals[0];
    assert_eq!(c.samples.len(), 4);
    assert!(c.samples.iter().all(|&(_, t)| t > 0.0));
    assert!(
        c.beta > 0.0,
        "copying 2 MiB takes longer than 0 bytes: {c:?}"
    );
    assert!(c.r_squared <= 1.0);
    let err = rpar::run(1, |world| calibrate(&world)).unwrap_err();
    assert!(err.to_string().contains("at least 2 ranks"), "{err}");
}

/// A network of no nodes is an error for every closed form, never a panic (a division by zero
/// once lurked in the circular shift).
#[test]
fn empty_networks_are_refused() {
    let params = Params::new(1e-6, 1e-7, 1e-9, 1e-10);
    for net in [
        Network::ring(0),
        Network::torus(0, 0),
        Network::mesh(0, 3),
        Network::fully_connected(0),
    ] {
        for sw in [Switching::StoreAndForward, Switching::CutThrough] {
            let results = [
                lecture::one_to_all_broadcast(&params, &net, sw, 8),
                lecture::single_node_accumulation(&params, &net, sw, 8),
                lecture::all_to_all_broadcast(&params, &net, sw, 8),
                lecture::all_reduce(&params, &net, 8),
                lecture::prefix_sums(&params, &net, 8),
                lecture::scatter(&params, &net, 8),
                lecture::all_to_all_personalized(&params, &net, sw, 8),
                lecture::circular_shift(&params, &net, sw, 8, 3),
            ];
            assert!(
                results.iter().all(Result::is_err),
                "{net:?} {sw:?}: {results:?}"
            );
        }
    }
}
