//! PNG charts of sweep results with plotters' bitmap backend and the
//! ab_glyph font renderer (no fontconfig): a TTF is loaded from
//! `$VOLLEY_BENCH_FONT` or the usual DejaVu Sans locations.
//!
//! Both axes are logarithmic; every server × command is one line, so two
//! servers' curves share each panel.

use std::io;
use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::point::{Op, Point};

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
];

/// Where RTT 0 (a direct loopback connection) is drawn on the log RTT axis.
pub const ZERO_RTT_X: f64 = 0.05;

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// Register a sans-serif TTF with plotters once per process.
pub fn ensure_font() -> io::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let mut paths: Vec<String> = std::env::var("VOLLEY_BENCH_FONT").into_iter().collect();
        paths.extend(FONT_PATHS.iter().map(|s| s.to_string()));
        for p in &paths {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                    .map_err(|_| format!("{p}: not a usable TTF"));
            }
        }
        Err(format!("no TTF font found (tried {paths:?}); set VOLLEY_BENCH_FONT"))
    })
    .clone()
    .map_err(io::Error::other)
}

/// Throughput against pipeline depth, one panel per RTT.
pub fn plot_depth(points: &[Point], path: &Path) -> io::Result<()> {
    let legend = SeriesLabelPosition::LowerRight;
    plot_panels(points, path, |p| p.rtt_ms, |v| format!("RTT {v} ms"), |p| p.depth as f64, "pipeline depth", legend)
}

/// Throughput against injected RTT, one panel per depth (RTT 0 is drawn at
/// [`ZERO_RTT_X`] ms).
pub fn plot_rtt(points: &[Point], path: &Path) -> io::Result<()> {
    let x = |p: &Point| if p.rtt_ms > 0.0 { p.rtt_ms } else { ZERO_RTT_X };
    let label = format!("injected RTT, ms (0 drawn at {ZERO_RTT_X})");
    let legend = SeriesLabelPosition::UpperRight;
    plot_panels(points, path, |p| p.depth as f64, |v| format!("depth {v}"), x, &label, legend)
}

fn distinct(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v.dedup();
    v
}

fn plot_panels(
    points: &[Point],
    path: &Path,
    panel_of: impl Fn(&Point) -> f64,
    panel_title: impl Fn(f64) -> String,
    x_of: impl Fn(&Point) -> f64,
    x_label: &str,
    legend: SeriesLabelPosition,
) -> io::Result<()> {
    ensure_font()?;
    if points.is_empty() {
        return Err(io_err("nothing to plot"));
    }
    let panels = distinct(points.iter().map(&panel_of).collect());
    let cols = panels.len().min(3);
    let rows = panels.len().div_ceil(cols);
    let root = BitMapBackend::new(path, (560 * cols as u32, 420 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(io_err)?;
    let areas = root.split_evenly((rows, cols));
    let mut series: Vec<(String, Op)> = Vec::new();
    for p in points {
        if !series.iter().any(|(s, o)| *s == p.server && *o == p.op) {
            series.push((p.server.clone(), p.op));
        }
    }
    for (area, &pv) in areas.iter().zip(&panels) {
        let mine: Vec<&Point> = points.iter().filter(|p| panel_of(p) == pv).collect();
        draw_panel(area, &mine, &series, (&panel_title(pv), x_label), &x_of, legend.clone())?;
    }
    root.present().map_err(io_err)
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    pts: &[&Point],
    series: &[(String, Op)],
    (title, x_label): (&str, &str),
    x_of: &impl Fn(&Point) -> f64,
    legend: SeriesLabelPosition,
) -> io::Result<()> {
    let xs: Vec<f64> = pts.iter().map(|p| x_of(p)).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.ops_per_sec.max(1.0)).collect();
    let (x0, x1) = (xs.iter().copied().fold(f64::MAX, f64::min), xs.iter().copied().fold(0.0, f64::max));
    let (y0, y1) = (ys.iter().copied().fold(f64::MAX, f64::min), ys.iter().copied().fold(0.0, f64::max));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 / 1.5..x1 * 1.5).log_scale(), (y0 / 2.0..y1 * 2.0).log_scale())
        .map_err(io_err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("ops/s")
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|v| format!("{v}"))
        .y_label_formatter(&|v| fmt_si(*v))
        .draw()
        .map_err(io_err)?;
    for (i, (server, op)) in series.iter().enumerate() {
        let mut line: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.server == *server && p.op == *op)
            .map(|p| (x_of(p), p.ops_per_sec.max(1.0)))
            .collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(io_err)?
            .label(format!("{server} {}", op.name()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(io_err)
}

fn fmt_si(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}
