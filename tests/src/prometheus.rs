//! A strict parser of the Prometheus text format (version 0.0.4), for tests that scrape
//! `/metrics`: it panics on anything the format does not allow, and checks that histograms
//! are whole.

use std::collections::{BTreeMap, HashMap};

/// A series' labels but `le`, in order.
type LabelPairs = Vec<(String, String)>;

/// One sample line: metric name, labels, value.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The metric's name (with `_bucket`, `_sum`, `_count` for a histogram's lines).
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its value.
    pub value: f64,
}

/// A page of the Prometheus text format: each family's type, and the samples in order. Panics
/// on anything the format does not allow: a sample of an undeclared family, a bad name, label
/// or value, a TYPE after its samples or twice, a histogram whose buckets do not end in `+Inf`,
/// are not cumulative, or disagree with `_count`, or that lacks `_sum`.
pub fn parse(page: &str) -> (HashMap<String, String>, Vec<Sample>) {
    fn name_ok(s: &str) -> bool {
        let mut c = s.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == ':')
    }
    fn number(s: &str) -> f64 {
        match s {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            _ => s.parse().unwrap_or_else(|_| panic!("bad value {s:?}")),
        }
    }
    let mut types: HashMap<String, String> = HashMap::new();
    let mut samples: Vec<Sample> = Vec::new();
    for line in page.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut words = rest.splitn(3, ' ');
            let (kind, name) = (words.next().unwrap(), words.next().unwrap_or_default());
            assert!(name_ok(name), "bad family name in {line:?}");
            if kind == "TYPE" {
                let t = words.next().unwrap_or_default();
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&t),
                    "{line:?}"
                );
                assert!(
                    !samples.iter().any(|s| s.name.starts_with(name)),
                    "TYPE after samples: {line:?}"
                );
                assert!(types.insert(name.into(), t.into()).is_none(), "{line:?}");
            }
            continue;
        }
        assert!(!line.starts_with('#'), "{line:?}");
        let (series, val) = match line.find('{') {
            Some(_) => {
                let close = line.rfind('}').unwrap_or_else(|| panic!("{line:?}"));
                (&line[..=close], line[close + 1..].trim())
            }
            None => line.split_once(' ').unwrap_or_else(|| panic!("{line:?}")),
        };
        let val = val.split(' ').next().unwrap();
        let (name, labels_text) = series.split_once('{').unwrap_or((series, "}"));
        assert!(name_ok(name), "bad metric name in {line:?}");
        let mut labels = BTreeMap::new();
        let mut rest = labels_text
            .strip_suffix('}')
            .unwrap_or_else(|| panic!("{line:?}"));
        while !rest.is_empty() {
            let (key, after) = rest.split_once("=\"").unwrap_or_else(|| panic!("{line:?}"));
            assert!(
                name_ok(key) && !key.contains(':'),
                "bad label name in {line:?}"
            );
            let mut v = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next() {
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => v.push('\n'),
                        Some((_, c @ ('\\' | '"'))) => v.push(c),
                        other => panic!("bad escape {other:?} in {line:?}"),
                    },
                    Some((i, '"')) => break i,
                    Some((_, c)) => v.push(c),
                    None => panic!("unterminated label value in {line:?}"),
                }
            };
            assert!(labels.insert(key.to_owned(), v).is_none(), "{line:?}");
            rest = &after[end + 1..];
            rest = rest.strip_prefix(',').unwrap_or(rest);
        }
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                name.strip_suffix(suffix).filter(|base| {
                    types
                        .get(*base)
                        .is_some_and(|t| t == "histogram" || t == "summary")
                })
            })
            .unwrap_or(name);
        assert!(types.contains_key(family), "no TYPE for {line:?}");
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value: number(val),
        });
    }
    // Histograms: per series, cumulative buckets ending in +Inf = _count, and a _sum.
    for (family, _) in types.iter().filter(|(_, t)| *t == "histogram") {
        let bucket = format!("{family}_bucket");
        let mut series: HashMap<LabelPairs, Vec<(f64, f64)>> = HashMap::new();
        for s in samples.iter().filter(|s| s.name == bucket) {
            let le = number(&s.labels["le"]);
            let key = s
                .labels
                .iter()
                .filter(|(k, _)| *k != "le")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            series.entry(key).or_default().push((le, s.value));
        }
        for (key, buckets) in &series {
            assert!(
                buckets
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
                "{family} {key:?}: {buckets:?}"
            );
            let (last_le, last) = *buckets.last().unwrap();
            assert!(last_le.is_infinite(), "{family} {key:?} ends below +Inf");
            let find = |suffix: &str| {
                samples
                    .iter()
                    .find(|s| {
                        s.name == format!("{family}{suffix}")
                            && s.labels
                                .iter()
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect::<Vec<_>>()
                                == *key
                    })
                    .map(|s| s.value)
            };
            assert_eq!(find("_count"), Some(last), "{family} {key:?}");
            assert!(find("_sum").is_some(), "{family} {key:?} has no _sum");
        }
    }
    (types, samples)
}

/// The value of the one sample `name` whose labels are exactly `labels`.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
}
