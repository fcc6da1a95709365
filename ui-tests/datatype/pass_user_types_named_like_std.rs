// A type is a Datatype field by what it is, not by its name: the user's own `Cell`, `Option`,
// `Vec` and `Box` derive Datatype and are fields like any other.
use rpar::{Datatype, TypeMap};

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Cell {
    value: f64,
    owner: u32,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Option {
    set: u8,
    value: i32,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Vec([f32; 3]);

mod shapes {
    #[derive(rpar::Datatype, Clone, Copy, Debug, PartialEq)]
    pub struct Box {
        pub corner: [i16; 2],
    }
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Grid {
    cells: [Cell; 2],
    flag: Option,
    normal: Vec,
    bounds: shapes::Box,
}

fn main() -> rpar::Result<()> {
    let g = Grid {
        cells: [Cell { value: 1.5, owner: 3 }, Cell { value: -2.0, owner: 4 }],
        flag: Option { set: 1, value: 7 },
        normal: Vec([0.0, 0.0, 1.0]),
        bounds: shapes::Box { corner: [2, 5] },
    };
    assert_eq!(Grid::type_map().size(), 2 * (8 + 4) + 1 + 4 + 12 + 4);
    let packed = Grid::type_map().commit().pack_to_vec(&[g], 1)?;
    let mut back = [Grid { ..g }; 1];
    back[0].cells[1].value = 0.0;
    TypeMap::contiguous(1, &Grid::type_map())?
        .commit()
        .unpack(&packed, &mut 0, &mut back, 1)?;
    assert_eq!(back[0], g);
    Ok(())
}
