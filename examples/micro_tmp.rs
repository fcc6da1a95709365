//! micro: loops of small collectives, for callgrind and timing
use std::time::Instant;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(200_000, |a| a.parse().unwrap());
    let p: usize = std::env::args().nth(2).map_or(2, |a| a.parse().unwrap());
    let what = std::env::args().nth(3).unwrap_or_else(|| "all".into());
    let t = rpar::run(p, |w| {
        let mut out = Vec::new();
        for name in ["bcast", "allreduce", "alltoall", "barrier", "pingpong"] {
            if what != "all" && what != name {
                continue;
            }
            w.barrier()?;
            let start = Instant::now();
            for _ in 0..n {
                match name {
                    "bcast" => {
                        let mut x = [1u64];
                        w.bcast(&mut x[..], 0)?;
                    }
                    "allreduce" => {
                        w.allreduce(&1u64, rpar::Sum)?;
                    }
                    "alltoall" => {
                        w.alltoall(&vec![1u64; p][..])?;
                    }
                    "barrier" => w.barrier()?,
                    _ => {
                        if w.rank() == 0 {
                            w.send(&1u64, 1, 0)?;
                            w.recv::<u64>(1, 0)?;
                        } else if w.rank() == 1 {
                            w.recv::<u64>(0, 0)?;
                            w.send(&1u64, 0, 0)?;
                        }
                    }
                }
            }
            out.push((name, start.elapsed().as_secs_f64() * 1e6 / n as f64));
        }
        Ok(out)
    })
    .unwrap();
    for (name, us) in &t[0] {
        println!("{name} {us:.4}");
    }
}
