#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self, #[floe(tag = 3)] a: Option<i32>, #[floe(tag = 3)] b: Option<i32>);
}

fn main() {}
