//! Scope names: where a result was measured, as the result tables, the
//! time series, `run.sample_scopes`, `run.delay_ratios` and traces name
//! it. The vocabulary the scenario's validation and the result tables
//! share, so that neither reads it from the other.

/// The scope of what is counted from a packet's creation to its
/// reception, over the whole network.
pub const END_TO_END: &str = "end-to-end";

/// The scope of the link direction from node `from` to node `to`:
/// `"from->to"`.
pub fn link_direction(from: &str, to: &str) -> String {
    format!("{from}->{to}")
}

/// The two node names of a link-direction scope (`"a->b"`), or `None` for
/// a scope of another form (such as [`END_TO_END`]).
pub fn split_link_direction(scope: &str) -> Option<(&str, &str)> {
    scope.split_once("->")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_direction_splits_into_its_nodes() {
        assert_eq!(link_direction("r1", "r2"), "r1->r2");
        assert_eq!(split_link_direction(&link_direction("r1", "r2")), Some(("r1", "r2")));
        assert_eq!(split_link_direction(END_TO_END), None);
    }
}
