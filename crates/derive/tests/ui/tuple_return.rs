// A tuple result is `(return value, out-parameters...)`: one element is
// not enough, and out-parameters cannot be optional.
#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self) -> (String,);
    async fn ho(&self) -> (i32, Option<i32>);
}

fn main() {}
