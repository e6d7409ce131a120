#[floe::interface(module = "M")]
pub trait Hello {
    const N: i32;
    async fn hi(&self);
}

fn main() {}
