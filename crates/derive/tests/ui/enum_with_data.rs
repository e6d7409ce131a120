#[derive(Clone, Copy, Debug, PartialEq, floe::Enum)]
#[floe(module = "M")]
pub enum Shape {
    Circle(i32),
    Square,
}

fn main() {}
