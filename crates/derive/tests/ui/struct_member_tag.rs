#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Point {
    pub x: i32,
    #[floe(tag = 1)]
    pub y: Option<i32>,
}

fn main() {}
