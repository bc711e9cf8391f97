//! Dependency-free SVG line plots with markers, for sweeps: loaded latency (ns) against achieved
//! bandwidth (GB/s), fabric latency against offered load.
//!
//! Axes get "nice" ticks (1, 2 or 5 × 10^k apart; decades on a log axis), grid lines, labels and
//! a legend; each series has its own colour, a marker at every point and a line joining the
//! points in the order given. Non-finite values, magnitudes beyond 1e200 or below 1e-200 (other
//! than 0) and, on a log axis, values ≤ 0 are skipped. The output is a pure function of the
//! input: coordinates have two decimals and tick labels are built from exact integers. Not
//! modelled: error bars, multiple y axes, a log x axis, legends that overflow the plot height.

use std::fmt::Write;

/// One named curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points, joined in this order.
    pub points: Vec<(f64, f64)>,
}

/// A plot: axes, labels and series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plot {
    /// Title above the plot.
    pub title: String,
    /// X axis label, with its unit: "achieved bandwidth (GB/s)".
    pub x_label: String,
    /// Y axis label, with its unit: "read latency (ns)".
    pub y_label: String,
    /// The curves, drawn and listed in the legend in this order.
    pub series: Vec<Series>,
    /// Logarithmic y axis (values ≤ 0 are then skipped).
    pub log_y: bool,
}

/// Canvas size and plot-area edges, in SVG user units (pixels).
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 450.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 540.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 394.0;

/// Tableau 10; later series get golden-angle hues.
const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

impl Plot {
    /// Renders the plot as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let x = Axis::linear(self.usable_points().map(|p| p.0));
        let y = match self.log_y {
            true => Axis::log(self.usable_points().map(|p| p.1)),
            false => Axis::linear(self.usable_points().map(|p| p.1)),
        };
        let mut s = String::new();
        let _ = write!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}""#);
        let _ = writeln!(s, r#" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#);
        let _ = writeln!(s, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
        text(&mut s, (LEFT + RIGHT) / 2.0, 24.0, "middle", r#" font-size="15""#, &self.title);
        self.axes(&mut s, &x, &y);
        for (i, series) in self.series.iter().enumerate() {
            self.draw_series(&mut s, series, &colour(i), &x, &y);
        }
        self.legend(&mut s);
        s.push_str("</svg>\n");
        s
    }

    /// Every point that can be drawn on this plot's axes.
    fn usable_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.series.iter().flat_map(|s| s.points.iter().copied()).filter(|&p| self.usable(p))
    }

    fn usable(&self, (x, y): (f64, f64)) -> bool {
        usable(x) && usable(y) && (!self.log_y || y > 0.0)
    }

    /// Grid, frame, ticks with labels, and axis labels.
    fn axes(&self, s: &mut String, x: &Axis, y: &Axis) {
        s.push_str("<g stroke=\"#e0e0e0\">\n");
        for (v, _) in &x.ticks {
            let px = x.px(*v);
            let _ = writeln!(s, r#"<line x1="{px:.2}" y1="{TOP:.2}" x2="{px:.2}" y2="{BOTTOM:.2}"/>"#);
        }
        for (v, _) in &y.ticks {
            let py = y.py(*v);
            let _ = writeln!(s, r#"<line x1="{LEFT:.2}" y1="{py:.2}" x2="{RIGHT:.2}" y2="{py:.2}"/>"#);
        }
        s.push_str("</g>\n");
        let (w, h) = (RIGHT - LEFT, BOTTOM - TOP);
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT:.2}" y="{TOP:.2}" width="{w:.2}" height="{h:.2}" fill="none" stroke="black"/>"#
        );
        for (v, label) in &x.ticks {
            text(s, x.px(*v), BOTTOM + 16.0, "middle", "", label);
        }
        for (v, label) in &y.ticks {
            text(s, LEFT - 6.0, y.py(*v) + 4.0, "end", "", label);
        }
        text(s, (LEFT + RIGHT) / 2.0, BOTTOM + 40.0, "middle", "", &self.x_label);
        let (yx, yy) = (18.0, (TOP + BOTTOM) / 2.0);
        text(s, yx, yy, "middle", &format!(r#" transform="rotate(-90 {yx:.2} {yy:.2})""#), &self.y_label);
    }

    /// A polyline through the series' usable points and a circle on each.
    fn draw_series(&self, s: &mut String, series: &Series, colour: &str, x: &Axis, y: &Axis) {
        let pts: Vec<(f64, f64)> =
            series.points.iter().copied().filter(|&p| self.usable(p)).map(|(a, b)| (x.px(a), y.py(b))).collect();
        let _ = writeln!(s, r#"<g fill="{colour}" stroke="{colour}">"#);
        if pts.len() > 1 {
            s.push_str(r#"<polyline fill="none" stroke-width="1.5" points=""#);
            for (i, (px, py)) in pts.iter().enumerate() {
                let sep = if i == 0 { "" } else { " " };
                let _ = write!(s, "{sep}{px:.2},{py:.2}");
            }
            s.push_str("\"/>\n");
        }
        for (px, py) in &pts {
            let _ = writeln!(s, r#"<circle cx="{px:.2}" cy="{py:.2}" r="3"/>"#);
        }
        s.push_str("</g>\n");
    }

    /// One row per series, right of the plot area: line, marker, name.
    fn legend(&self, s: &mut String) {
        for (i, series) in self.series.iter().enumerate() {
            let (c, y) = (colour(i), TOP + 10.0 + 18.0 * i as f64);
            let (x0, x1) = (RIGHT + 14.0, RIGHT + 38.0);
            let xm = (x0 + x1) / 2.0;
            let _ = writeln!(
                s,
                r#"<line x1="{x0:.2}" y1="{y:.2}" x2="{x1:.2}" y2="{y:.2}" stroke="{c}" stroke-width="1.5"/>"#
            );
            let _ = writeln!(s, r#"<circle cx="{xm:.2}" cy="{y:.2}" r="3" fill="{c}"/>"#);
            text(s, x1 + 6.0, y + 4.0, "start", "", &series.name);
        }
    }
}

/// Finite and of a magnitude the tick arithmetic handles exactly enough.
fn usable(v: f64) -> bool {
    v == 0.0 || (v.is_finite() && (1e-200..=1e200).contains(&v.abs()))
}

/// The colour of series `i`: distinct for every index.
/// A stacked-bar chart: one bar per label, each stacked from the categories' values (in
/// category order, bottom up), with a legend. Values below 0 or not finite count as 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bars {
    /// Title above the chart.
    pub title: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// Category names (the stack's layers), bottom first.
    pub categories: Vec<String>,
    /// (bar label, one value per category).
    pub bars: Vec<(String, Vec<f64>)>,
}

impl Bars {
    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let clean = |v: f64| if v.is_finite() && v > 0.0 { v } else { 0.0 };
        let totals = self.bars.iter().map(|(_, vs)| vs.iter().copied().map(clean).sum::<f64>());
        let y = Axis::linear(totals.chain(std::iter::once(0.0)));
        let mut s = String::new();
        let _ = write!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}""#);
        let _ = writeln!(s, r#" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#);
        let _ = writeln!(s, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
        text(&mut s, (LEFT + RIGHT) / 2.0, 24.0, "middle", r#" font-size="15""#, &self.title);
        for (v, label) in &y.ticks {
            let py = y.py(*v);
            let _ =
                writeln!(s, r##"<line x1="{LEFT:.2}" y1="{py:.2}" x2="{RIGHT:.2}" y2="{py:.2}" stroke="#e0e0e0"/>"##);
            text(&mut s, LEFT - 6.0, py + 4.0, "end", "", label);
        }
        let n = self.bars.len().max(1) as f64;
        let slot = (RIGHT - LEFT) / n;
        for (i, (label, vs)) in self.bars.iter().enumerate() {
            let x0 = LEFT + slot * (i as f64 + 0.2);
            let w = slot * 0.6;
            let mut base = 0.0;
            for (k, v) in vs.iter().copied().map(clean).enumerate() {
                let (top, bottom) = (y.py(base + v), y.py(base));
                let h = (bottom - top).max(0.0);
                let _ = writeln!(
                    s,
                    r#"<rect x="{x0:.2}" y="{top:.2}" width="{w:.2}" height="{h:.2}" fill="{}"/>"#,
                    colour(k)
                );
                base += v;
            }
            text(&mut s, x0 + w / 2.0, BOTTOM + 16.0, "middle", "", label);
        }
        let (w, h) = (RIGHT - LEFT, BOTTOM - TOP);
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT:.2}" y="{TOP:.2}" width="{w:.2}" height="{h:.2}" fill="none" stroke="black"/>"#
        );
        let (yx, yy) = (18.0, (TOP + BOTTOM) / 2.0);
        text(&mut s, yx, yy, "middle", &format!(r#" transform="rotate(-90 {yx:.2} {yy:.2})""#), &self.y_label);
        for (k, c) in self.categories.iter().enumerate().rev() {
            let ly = TOP + 10.0 + 18.0 * (self.categories.len() - 1 - k) as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{:.2}" width="12" height="12" fill="{}"/>"#,
                RIGHT + 12.0,
                ly - 10.0,
                colour(k)
            );
            text(&mut s, RIGHT + 30.0, ly, "start", "", c);
        }
        s.push_str("</svg>\n");
        s
    }
}

fn colour(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => (*c).to_string(),
        None => {
            let j = i - PALETTE.len();
            format!("hsl({},60%,{}%)", j * 137 % 360, 35 + j / 360 % 4 * 10)
        }
    }
}

/// A `<text>` element; `extra` is further attributes, starting with a space.
fn text(s: &mut String, x: f64, y: f64, anchor: &str, extra: &str, content: &str) {
    let _ = writeln!(s, r#"<text x="{x:.2}" y="{y:.2}" text-anchor="{anchor}"{extra}>{}</text>"#, escape(content));
}

/// XML-escapes text and drops control characters XML forbids.
fn escape(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// One axis: its range and its ticks (value, label).
#[derive(Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis covering `values`, widened to whole ticks.
    fn linear(values: impl Iterator<Item = f64>) -> Axis {
        let (mut min, mut max) = min_max(values).unwrap_or((0.0, 1.0));
        if max - min <= 1e-9 * min.abs().max(max.abs()) {
            let pad = if max == 0.0 { 1.0 } else { max.abs() * 0.1 };
            (min, max) = (min - pad, max + pad);
        }
        let (m, k) = nice_step((max - min) / 5.0);
        let step = m as f64 * pow10(k);
        let (i_lo, i_hi) = ((min / step).floor() as i64, (max / step).ceil() as i64);
        let ticks = (i_lo..=i_hi).map(|i| (i as f64 * step, decimal_label(i * m, k))).collect();
        Axis { lo: i_lo as f64 * step, hi: i_hi as f64 * step, log: false, ticks }
    }

    /// A log axis covering the positive `values`: ticks at 1, 2, 5 × 10^k over up to two
    /// decades (the axis then ends at the ticks around the data), else at (every n-th) decade.
    fn log(values: impl Iterator<Item = f64>) -> Axis {
        let (min, max) = min_max(values.filter(|&v| v > 0.0)).unwrap_or((1.0, 10.0));
        let lo_e = min.log10().floor() as i32;
        let decades = (max.log10().ceil() as i32 - lo_e).max(1);
        let every = (decades + 7) / 8; // at most 8 labelled decades
        let hi_e = lo_e + (decades + every - 1) / every * every;
        let mants: &[i64] = if decades <= 2 { &[1, 2, 5] } else { &[1] };
        let mut ticks = Vec::new();
        for e in (lo_e..=hi_e).step_by(every as usize) {
            let ms = if e == hi_e { &[1][..] } else { mants };
            ticks.extend(ms.iter().map(|&m| (m as f64 * pow10(e), decimal_label(m, e))));
        }
        let ticks = trim_ticks(ticks, min, max);
        Axis { lo: ticks[0].0, hi: ticks[ticks.len() - 1].0, log: true, ticks }
    }

    /// Fraction of the way from `lo` to `hi`.
    fn frac(&self, v: f64) -> f64 {
        match self.log {
            true => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
            false => (v - self.lo) / (self.hi - self.lo),
        }
    }

    /// Horizontal pixel of `v` on an x axis.
    fn px(&self, v: f64) -> f64 {
        LEFT + self.frac(v) * (RIGHT - LEFT)
    }

    /// Vertical pixel of `v` on a y axis.
    fn py(&self, v: f64) -> f64 {
        BOTTOM - self.frac(v) * (BOTTOM - TOP)
    }
}

/// Keeps the ticks from the last at or below `min` to the first at or above `max`, and at
/// least two. `ticks` is ascending, has two or more entries, and spans [min, max].
fn trim_ticks(mut ticks: Vec<(f64, String)>, min: f64, max: f64) -> Vec<(f64, String)> {
    let eps = 1e-9;
    let mut lo = ticks.iter().rposition(|t| t.0 <= min * (1.0 + eps)).unwrap_or(0);
    let mut hi = ticks.iter().position(|t| t.0 >= max * (1.0 - eps)).unwrap_or(ticks.len() - 1).max(lo);
    if hi == lo {
        (lo, hi) = if hi + 1 < ticks.len() { (lo, hi + 1) } else { (lo.saturating_sub(1), hi) };
    }
    ticks.truncate(hi + 1);
    ticks.drain(..lo);
    ticks
}

fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

fn pow10(k: i32) -> f64 {
    10f64.powi(k)
}

/// The smallest step m × 10^k ≥ `raw` with m in {1, 2, 5}, as (m, k).
fn nice_step(raw: f64) -> (i64, i32) {
    let k = raw.log10().floor() as i32;
    let f = raw / pow10(k);
    match f {
        f if f <= 1.0 => (1, k),
        f if f <= 2.0 => (2, k),
        f if f <= 5.0 => (5, k),
        _ => (1, k + 1),
    }
}

/// The exact decimal n × 10^k: plain with max(0, -k) decimals when short, else `2.5e6` style.
fn decimal_label(n: i64, k: i32) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let digits = n.unsigned_abs().to_string();
    let len = digits.len() as i32;
    if n == 0 && k >= 0 {
        "0".to_string()
    } else if (0..=6 - len).contains(&k) {
        format!("{sign}{digits}{}", "0".repeat(k as usize))
    } else if (-4..0).contains(&k) {
        let dec = (-k) as usize;
        let padded = format!("{digits:0>width$}", width = dec + 1);
        let (int, frac) = padded.split_at(padded.len() - dec);
        format!("{sign}{int}.{frac}")
    } else {
        let trimmed = digits.trim_end_matches('0');
        let exp = k + len - 1;
        match trimmed.len() {
            0 | 1 => format!("{sign}{}e{exp}", &digits[..1]),
            _ => format!("{sign}{}.{}e{exp}", &trimmed[..1], &trimmed[1..]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks tags nest and close, attributes' quotes pair up, and text holds no raw `<` or bare
    /// `&`: enough of XML well-formedness to catch what string-building gets wrong.
    fn assert_well_formed(svg: &str) {
        let mut stack: Vec<&str> = Vec::new();
        let mut roots = 0;
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open]);
            let close = rest[open..].find('>').expect("unclosed `<`") + open;
            let tag = &rest[open + 1..close];
            assert_eq!(tag.matches('"').count() % 2, 0, "unpaired quote in <{tag}>");
            assert!(!tag.contains('<'), "`<` inside <{tag}>");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(name), "mismatched </{name}>");
            } else {
                let name = tag.split_whitespace().next().expect("empty tag").trim_end_matches('/');
                roots += usize::from(stack.is_empty());
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
            rest = &rest[close + 1..];
        }
        check_text(rest);
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert_eq!(roots, 1, "one root element");
    }

    fn check_text(t: &str) {
        for (i, _) in t.match_indices('&') {
            let ent = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"];
            assert!(ent.iter().any(|e| t[i..].starts_with(e)), "bare & in {t:?}");
        }
    }

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series { name: name.into(), points: points.to_vec() }
    }

    fn loaded_latency() -> Plot {
        Plot {
            title: "HBM3 loaded latency".into(),
            x_label: "achieved bandwidth (GB/s)".into(),
            y_label: "read latency (ns)".into(),
            series: vec![
                series("stream-read", &[(10.0, 50.0), (40.0, 60.0), (80.0, 120.0), (100.0, 250.0)]),
                series("random", &[(0.0, 55.0), (30.0, 90.0), (60.0, 200.0)]),
            ],
            log_y: false,
        }
    }

    fn tick_labels(svg: &str) -> Vec<&str> {
        svg.lines()
            .filter(|l| l.starts_with("<text") && !l.contains("font-size"))
            .filter_map(|l| {
                let start = l.find('>')? + 1;
                Some(&l[start..l.rfind("</text>")?])
            })
            .collect()
    }

    #[test]
    fn svg_is_well_formed_with_series_names_and_labels() {
        let svg = loaded_latency().to_svg();
        assert_well_formed(&svg);
        for want in ["HBM3 loaded latency", "achieved bandwidth (GB/s)", "read latency (ns)", "stream-read", "random"] {
            assert!(svg.contains(&format!(">{want}</text>")), "missing {want}");
        }
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 7 + 2);
    }

    #[test]
    fn ticks_are_nice_for_a_known_input() {
        let svg = loaded_latency().to_svg();
        let labels = tick_labels(&svg);
        let x = ["0", "20", "40", "60", "80", "100"];
        let y = ["50", "100", "150", "200", "250"];
        for want in x.iter().chain(&y) {
            assert!(labels.contains(want), "missing tick {want} in {labels:?}");
        }
        assert!(!labels.contains(&"120"), "{labels:?}");
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(loaded_latency().to_svg(), loaded_latency().to_svg());
        let mut p = loaded_latency();
        p.series[0].points[0].1 = 55.0;
        assert_ne!(p.to_svg(), loaded_latency().to_svg());
    }

    #[test]
    fn non_finite_points_are_skipped() {
        let mut p = loaded_latency();
        p.series[0].points.extend([(f64::NAN, 1.0), (5.0, f64::INFINITY), (f64::NEG_INFINITY, 3.0), (1e300, 2.0)]);
        let svg = p.to_svg();
        assert_well_formed(&svg);
        assert_eq!(svg, loaded_latency().to_svg());
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn degenerate_inputs_stay_finite() {
        let cases = [
            vec![],
            vec![series("empty", &[])],
            vec![series("one", &[(3.0, 7.0)])],
            vec![series("on a tick", &[(10.0, 10.0), (10.0, 10.0)])],
            vec![series("flat", &[(1.0, 5.0), (2.0, 5.0), (3.0, 5.0)])],
            vec![series("zeros", &[(0.0, 0.0), (0.0, 0.0)])],
            vec![series("nan only", &[(f64::NAN, f64::NAN)])],
            vec![series("tiny", &[(1e-200, -1e-200), (2e-200, 3e-200)])],
            vec![series("huge", &[(-1e200, 1e200), (1e200, -1e200)])],
        ];
        for (i, s) in cases.into_iter().enumerate() {
            for log_y in [false, true] {
                let svg = Plot { series: s.clone(), log_y, ..Plot::default() }.to_svg();
                assert_well_formed(&svg);
                assert!(!svg.contains("NaN") && !svg.contains("inf"), "case {i} log_y {log_y}:\n{svg}");
                assert!(tick_labels(&svg).len() >= 4, "case {i} log_y {log_y}: too few ticks");
            }
        }
    }

    #[test]
    fn log_axis_ticks_on_decades_and_skips_non_positive() {
        let p = Plot {
            series: vec![series("lat", &[(1.0, 10.0), (2.0, 1000.0), (3.0, 0.0), (4.0, -5.0)])],
            log_y: true,
            ..Plot::default()
        };
        let svg = p.to_svg();
        let labels = tick_labels(&svg);
        for want in ["10", "100", "1000"] {
            assert!(labels.contains(&want), "missing {want} in {labels:?}");
        }
        assert_eq!(svg.matches("<circle").count(), 2 + 1);
        let narrow = Plot { series: vec![series("s", &[(0.0, 0.3), (1.0, 4.0)])], log_y: true, ..Plot::default() };
        let labels = tick_labels(&narrow.to_svg()).join(" ");
        assert!(labels.contains(" 0.2 0.5 1 2 5 "), "{labels}");
        assert!(!labels.contains(" 0.1 ") && !labels.contains(" 10 "), "{labels}");
    }

    #[test]
    fn text_is_escaped() {
        let p =
            Plot { title: "a<b & \"c\"\u{1}".into(), series: vec![series("x>y", &[(1.0, 1.0)])], ..Plot::default() };
        let svg = p.to_svg();
        assert_well_formed(&svg);
        assert!(svg.contains(">a&lt;b &amp; &quot;c&quot;</text>") && svg.contains(">x&gt;y</text>"));
    }

    #[test]
    fn every_series_gets_its_own_colour() {
        let many: Vec<String> = (0..40).map(colour).collect();
        let mut uniq = many.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), many.len(), "{many:?}");
    }

    #[test]
    fn tick_labels_are_exact_decimals() {
        let cases = [
            ((0, 0), "0"),
            ((0, 1), "0"),
            ((0, 9), "0"),
            ((0, -1), "0.0"),
            ((5, -1), "0.5"),
            ((15, -1), "1.5"),
            ((-2, -2), "-0.02"),
            ((250, 1), "2500"),
            ((2, 6), "2e6"),
            ((25, 5), "2.5e6"),
            ((15, -6), "1.5e-5"),
            ((1000000, 0), "1e6"),
            ((100000, 0), "100000"),
        ];
        for ((n, k), want) in cases {
            assert_eq!(decimal_label(n, k), want, "{n}e{k}");
        }
        assert_eq!(nice_step(3.7), (5, 0));
        assert_eq!(nice_step(0.011), (2, -2));
        assert_eq!(nice_step(7.0), (1, 1));
    }
}
