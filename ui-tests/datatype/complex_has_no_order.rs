use rpar::{Complex, Max};

fn main() {
    // MPI_MAX is defined for real types only: a complex number has no order
    let _ = rpar::run(2, |world| world.allreduce(&Complex::new(1.0f64, 2.0), Max));
}
