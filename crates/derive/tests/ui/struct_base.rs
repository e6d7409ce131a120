#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Point {
    pub x: i32,
}

#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Point3 {
    #[floe(base)]
    pub base: Point,
    pub z: i32,
}

fn main() {}
