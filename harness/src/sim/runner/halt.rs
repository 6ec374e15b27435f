//! Why the scripted steps stopped early.

#[derive(Clone, Debug, PartialEq)]
pub enum Halt {
    /// An await missed its deadline: the rest of the script is meaningless.
    Await(String),
    /// A limit was hit: the run ends here.
    Limit(String),
    /// A panic in the simulation: the run ends here.
    Crashed(String),
}
