//! Long timelines, drawn readably: a chart over time with more than [`MAX_POINTS`] points
//! (a one-hour run has 3600 per series, a ladder of them dozens of charts) is drawn with
//! each point the mean of consecutive intervals, so the page stays small and fast while the
//! JSON keeps every interval. The chart's title says so.

use crate::analysis::chart::Chart;

/// Points per series beyond which a time chart is downsampled.
pub const MAX_POINTS: usize = 600;

/// Downsamples `chart` in place when it is a time chart longer than [`MAX_POINTS`]: each
/// point becomes the mean of `k` consecutive ones (missing values skipped), at the last
/// one's time.
pub fn downsample(chart: &mut Chart) {
    let n = chart.x.len();
    if chart.x_kind != "time" || n <= MAX_POINTS {
        return;
    }
    let k = n.div_ceil(MAX_POINTS);
    chart.x = chart.x.chunks(k).map(|c| c[c.len() - 1]).collect();
    for s in &mut chart.series {
        s.values = s
            .values
            .chunks(k)
            .map(|c| {
                let present: Vec<f64> = c.iter().flatten().copied().collect();
                (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
            })
            .collect();
    }
    chart.title = format!("{} (each point the mean of {k} intervals)", chart.title);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::chart::Series;

    #[test]
    fn an_hour_is_drawn_with_at_most_600_points_of_means() {
        let mut c = Chart::new("Throughput", "time", "s", "per second");
        c.x = (1..=3600).map(|t| t as f64).collect();
        let vals = (1..=3600)
            .map(|t| if t == 7 { None } else { Some(t as f64) })
            .collect();
        c.series.push(Series::line("tps", vals));
        downsample(&mut c);
        assert_eq!(c.x.len(), 600);
        assert_eq!(c.x[0], 6.0);
        assert_eq!(c.series[0].values.len(), 600);
        assert_eq!(c.series[0].values[0], Some(3.5));
        assert_eq!(
            c.series[0].values[1],
            Some((8 + 9 + 10 + 11 + 12) as f64 / 5.0)
        );
        assert!(c.title.contains("mean of 6 intervals"));
        let mut short = Chart::new("Short", "time", "s", "per second");
        short.x = vec![1.0, 2.0];
        downsample(&mut short);
        assert_eq!(short.title, "Short");
    }
}
