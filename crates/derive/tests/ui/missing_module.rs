#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
pub struct Point {
    pub x: i32,
}

fn main() {}
