// A supertrait must be a `#[floe::interface]` trait.
pub trait NotAnInterface {}

#[floe::interface(module = "M")]
pub trait Derived: NotAnInterface {
    async fn pong(&self);
}

fn main() {}
