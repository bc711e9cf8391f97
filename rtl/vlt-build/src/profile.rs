//! The build profile a block crate needs: its models and trnsim's diff loop run about 8x slower
//! unoptimized.

/// The advice for a block crate built at cargo's `OPT_LEVEL` `opt` (None when it needs none:
/// optimized, or the level unknown).
pub fn profile_advice(opt: Option<&str>) -> Option<String> {
    (opt == Some("0")).then(|| {
        "this crate's models and trnsim's diff loop are built unoptimized (opt-level 0), about 8x slower than trnsim's \
         dev profile: add `[profile.dev]` with `opt-level = 1` to your workspace's Cargo.toml (docs/tutorial-verification.md)"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unoptimized_block_crate_is_told_the_profile_it_needs() {
        let w = super::profile_advice(Some("0")).expect("advice at opt-level 0");
        assert!(w.contains("[profile.dev]") && w.contains("opt-level = 1"), "{w}");
        for quiet in [Some("1"), Some("3"), Some("s"), None] {
            assert_eq!(super::profile_advice(quiet), None, "{quiet:?}");
        }
    }
}
