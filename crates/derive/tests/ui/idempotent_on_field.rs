#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Point {
    #[floe(idempotent)]
    pub x: i32,
}

fn main() {}
