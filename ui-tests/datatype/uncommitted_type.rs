use rpar::{Datatype, TypeMap};

fn main() -> rpar::Result<()> {
    rpar::run(2, |world| {
        let column = TypeMap::vector(4, 1, 8, &f64::type_map())?; // not committed
        let m = [0.0f64; 32];
        world.send(rpar::Typed::new(&m, &column, 1), 1, 0)?;
        Ok(())
    })?;
    Ok(())
}
