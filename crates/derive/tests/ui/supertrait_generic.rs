#[floe::interface(module = "M")]
pub trait Base {
    async fn ping(&self);
}

#[floe::interface(module = "M")]
pub trait Derived: Base + Clone<> + ::std::fmt::Debug {
    async fn ping(&self);
}

fn main() {}
