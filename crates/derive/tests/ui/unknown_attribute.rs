#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M", colour = "red")]
pub struct Point {
    pub x: i32,
}

fn main() {}
