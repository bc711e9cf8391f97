//! Byte-level JSON formatting for the Chrome writer: integers, exact decimal microseconds from
//! picoseconds, escaped strings, and the model of how Perfetto's trace processor rounds JSON
//! times. Nothing here allocates.

/// Appends the decimal digits of `n`.
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// Appends `ps` picoseconds as exact decimal microseconds, without trailing zeros:
/// 1234567 → `1.234567`, 416 → `0.000416`, 2000000 → `2`.
pub(crate) fn push_us(buf: &mut Vec<u8>, ps: u64) {
    push_u64(buf, ps / 1_000_000);
    let mut frac = ps % 1_000_000;
    if frac == 0 {
        return;
    }
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    let len = digits.iter().rposition(|&d| d != b'0').map_or(0, |p| p + 1);
    buf.push(b'.');
    buf.extend_from_slice(&digits[..len]);
}

/// Appends `s` as a JSON string literal (quotes included), escaping `"`, `\` and control
/// characters; other characters pass through as UTF-8.
pub(crate) fn push_str(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 0xf)]);
            }
            _ => buf.push(b),
        }
    }
    buf.push(b'"');
}

/// The nanosecond timestamp Perfetto's trace processor (v52) reads from a JSON time written by
/// [`push_us`]: the nearest double to the microseconds, times 1000, rounded half away from zero.
/// (Measured: it matches the trace processor on 800 random and half-ns values.) Exact for
/// `ps < 2^53`, about 2.5 simulated hours.
pub(crate) fn perfetto_ns(ps: u64) -> u64 {
    ((ps as f64 / 1e6) * 1000.0).round() as u64
}

/// The duration, in ps, to write for the `X` event of `[start, end)` so that Perfetto places its
/// end where it places a time written as `end`. Usually the exact `end - start`; but the trace
/// processor rounds `ts` and `dur` separately, which can move the end by 1 ns (past the next
/// slice's start, which it then drops as overlapping, or short of it). In that case the duration
/// is the whole-ns difference of the two rounded times instead (within 1 ns of exact).
pub(crate) fn dur_for_perfetto(start: u64, end: u64) -> u64 {
    let d = end - start;
    let (ns_start, ns_end) = (perfetto_ns(start), perfetto_ns(end));
    if ns_start + perfetto_ns(d) == ns_end {
        d
    } else {
        (ns_end - ns_start) * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(ps: u64) -> String {
        let mut b = Vec::new();
        push_us(&mut b, ps);
        String::from_utf8(b).unwrap_or_default()
    }

    #[test]
    fn microseconds_are_exact_decimals() {
        assert_eq!(us(1_234_567), "1.234567");
        assert_eq!(us(0), "0");
        assert_eq!(us(416), "0.000416");
        assert_eq!(us(714), "0.000714");
        assert_eq!(us(2_000_000), "2");
        assert_eq!(us(1_500_000), "1.5");
        assert_eq!(us(1_000_010), "1.00001");
        assert_eq!(us(u64::MAX), "18446744073709.551615");
    }

    #[test]
    fn strings_are_escaped() {
        let mut b = Vec::new();
        push_str(&mut b, "a\"b\\c\n\u{1}é");
        assert_eq!(String::from_utf8(b).unwrap_or_default(), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }

    #[test]
    fn integers_format() {
        let mut b = Vec::new();
        push_u64(&mut b, 0);
        b.push(b' ');
        push_u64(&mut b, u64::MAX);
        assert_eq!(String::from_utf8(b).unwrap_or_default(), "0 18446744073709551615");
    }

    #[test]
    fn perfetto_rounding_model() {
        assert_eq!(perfetto_ns(500), 1);
        assert_eq!(perfetto_ns(499), 0);
        assert_eq!(perfetto_ns(2_500), 3);
        // Measured in the v52 trace processor: half-ns values of large times can round down.
        assert_eq!(perfetto_ns(8_543_797_920_500), 8_543_797_920);
    }

    #[test]
    fn durations_keep_rounded_ends_monotone() {
        // ts 0.6 ns and dur 1.6 ns round to 1 + 2 = 3 ns, but the end 2.2 ns rounds to 2.
        assert_eq!(dur_for_perfetto(600, 2_200), 1_000);
        // Consistent cases keep the exact duration.
        assert_eq!(dur_for_perfetto(0, 714), 714);
        assert_eq!(dur_for_perfetto(0, 416), 416);
        // 1.4 GHz cycle 1: [0.714, 1.428) ns would read as [1, 2) but its end rounds to 1.
        assert_eq!(dur_for_perfetto(714, 1_428), 0);
        for (s, e) in [(0u64, 714u64), (714, 1_428), (1_428, 2_142), (600, 2_200), (2_200, 4_000)] {
            let end = perfetto_ns(s) + perfetto_ns(dur_for_perfetto(s, e));
            assert_eq!(end, perfetto_ns(e), "[{s}, {e})");
        }
    }
}
