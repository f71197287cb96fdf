//! Points, replicas and the order runs go in.
//!
//! A *point* is one combination of axis values (full factorial) or one listed
//! point: the base parameters with the values' edits applied. A *run* is a
//! point and a replica number. Ids are hashes of what defines them, so they
//! do not depend on the order, and a rerun (or a resubmission) recognises the
//! runs it has already done:
//!
//! - point id: FNV-1a 64 of the canonical JSON of the point's parameter map;
//! - run id: `<point id>-r<replica>`.
//!
//! Replica `r` perturbs what the study names, the same way at every point
//! (common random numbers: two points are compared under the same
//! perturbations):
//!
//! - `latency`: every link latency of the generated platform is multiplied by
//!   `1 + δ_r`, δ_r uniform in `[-latency_jitter, +latency_jitter]` (default
//!   1e-9: a femtosecond on a microsecond link);
//! - `seed`: `--cfg=smpi/seed:<s_r>`, which seeds every noise model (and
//!   modelled idamax).
//!
//! Both draws come from PCG streams keyed by the study seed and `r`. Runs go
//! in a random order (a Fisher–Yates shuffle seeded by the study seed), so
//! that slow drift of the machine (other jobs, thermal state) does not line
//! up with an axis.

use anyhow::Result;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use crate::spec::{apply, Design, Params, Perturb, Study};

/// One point of the design.
#[derive(Clone, Debug)]
pub struct Point {
    /// Stable id (hash of the parameters).
    pub id: String,
    /// Position in the design (factorial order or listing order).
    pub index: usize,
    /// Every parameter.
    pub params: Params,
    /// `(axis name, value label)` for each axis.
    pub labels: Vec<(String, String)>,
}

impl Point {
    /// `axis=value, ...` for messages.
    pub fn describe(&self) -> String {
        if self.labels.is_empty() {
            "(the base point)".into()
        } else {
            self.labels
                .iter()
                .map(|(a, v)| format!("{a}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// What one replica changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Perturbation {
    /// Factor applied to every latency (1 when latencies are not perturbed).
    pub latency_factor: f64,
    /// `smpi/seed`, when the seed is perturbed.
    pub seed: Option<u64>,
}

/// One run: a point and a replica.
#[derive(Clone, Debug)]
pub struct Run {
    /// `<point id>-r<replica>`.
    pub id: String,
    /// The point.
    pub point: Point,
    /// Replica number, from 0.
    pub replica: u32,
    /// Position in the randomized order, from 0.
    pub order: usize,
    /// What the replica perturbs.
    pub perturbation: Perturbation,
}

/// FNV-1a, 64 bits: a stable hash (std's is randomized per process).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 finalizer: spreads a key into a seed.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A PCG stream for `(seed, purpose, index)`.
pub fn stream(seed: u64, purpose: &str, index: u64) -> Pcg64 {
    Pcg64::seed_from_u64(mix(seed ^ mix(fnv1a(purpose.as_bytes()) ^ mix(index))))
}

/// The points of a study, in design order.
pub fn points(study: &Study) -> Result<Vec<Point>> {
    let combos: Vec<Vec<usize>> = match &study.design {
        Design::List(list) => list.clone(),
        Design::Factorial => {
            let mut combos = vec![Vec::new()];
            for axis in &study.axes {
                let mut next = Vec::new();
                for c in &combos {
                    for j in 0..axis.values.len() {
                        let mut c = c.clone();
                        c.push(j);
                        next.push(c);
                    }
                }
                combos = next;
            }
            combos
        }
    };
    let mut out = Vec::new();
    for (index, combo) in combos.iter().enumerate() {
        let mut params = study.base.clone();
        let mut labels = Vec::new();
        for (axis, &j) in study.axes.iter().zip(combo) {
            let v = &axis.values[j];
            for (k, val) in &v.set {
                apply(&mut params, k, val)
                    .map_err(|e| anyhow::anyhow!("axis {}, value {}: {e}", axis.name, v.label))?;
            }
            labels.push((axis.name.clone(), v.label.clone()));
        }
        let json = serde_json::to_string(&params_json(&params)).expect("parameters serialize");
        let id = format!("{:016x}", fnv1a(json.as_bytes()));
        if let Some(p) = out.iter().find(|p: &&Point| p.id == id) {
            anyhow::bail!(
                "points {} and {} have the same parameters (an axis value changes nothing?)",
                p.describe(),
                Point {
                    id,
                    index,
                    params,
                    labels
                }
                .describe()
            );
        }
        out.push(Point {
            id,
            index,
            params,
            labels,
        });
    }
    Ok(out)
}

/// The parameter map as JSON (for rows and ids).
pub fn params_json(params: &Params) -> serde_json::Map<String, serde_json::Value> {
    params
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::to_value(v).expect("TOML values are JSON values"),
            )
        })
        .collect()
}

/// The perturbation of replica `r`.
pub fn perturbation(study: &Study, r: u32) -> Perturbation {
    let rep = &study.replicas;
    let latency_factor = if rep.perturb.contains(&Perturb::Latency) && rep.latency_jitter > 0.0 {
        let delta: f64 =
            stream(study.seed, "latency", r as u64).gen_range(-rep.latency_jitter..=rep.latency_jitter);
        1.0 + delta
    } else {
        1.0
    };
    let seed = rep
        .perturb
        .contains(&Perturb::Seed)
        // smpi/seed is parsed as an unsigned integer; keep it in 31 bits for any reader.
        .then(|| stream(study.seed, "seed", r as u64).gen_range(1..=0x7fff_ffffu64));
    Perturbation { latency_factor, seed }
}

/// Every run of the study, in the randomized order.
pub fn runs(study: &Study) -> Result<Vec<Run>> {
    let points = points(study)?;
    let mut runs = Vec::new();
    for p in &points {
        for r in 0..study.replicas.count {
            runs.push(Run {
                id: format!("{}-r{r}", p.id),
                point: p.clone(),
                replica: r,
                order: 0,
                perturbation: perturbation(study, r),
            });
        }
    }
    runs.shuffle(&mut stream(study.seed, "order", 0));
    for (i, r) in runs.iter_mut().enumerate() {
        r.order = i;
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const STUDY: &str = r#"
name = "t"
seed = 3
np = 2
[program]
path = "/bin/true"
args = ["{size}"]
[program.params]
size = "1"
[platform]
kind = "flat"
hosts = 4
bw = "1GBps"
lat = "10us"
[replicas]
count = 2
perturb = ["latency", "seed"]
[[axis]]
key = "param.size"
values = ["1", "1k", "1M"]
[[axis]]
name = "bandwidth"
key = "platform.bw"
values = ["1GBps", "2GBps", "4GBps"]
"#;

    #[test]
    fn factorial_runs_are_shuffled_and_stable() {
        let s = Study::from_str(STUDY, Path::new("t.toml"), Path::new("/")).unwrap();
        let a = runs(&s).unwrap();
        assert_eq!(a.len(), 18);
        let ids: std::collections::BTreeSet<_> = a.iter().map(|r| r.id.clone()).collect();
        assert_eq!(ids.len(), 18);
        let design_order: Vec<_> = a.iter().map(|r| (r.point.index, r.replica)).collect();
        let mut sorted = design_order.clone();
        sorted.sort();
        assert_ne!(design_order, sorted, "the order is randomized");
        let b = runs(&s).unwrap();
        assert_eq!(
            a.iter().map(|r| &r.id).collect::<Vec<_>>(),
            b.iter().map(|r| &r.id).collect::<Vec<_>>()
        );
        // Replicas differ, points share them.
        let p0: Vec<_> = a.iter().filter(|r| r.point.index == 0).collect();
        assert_ne!(p0[0].perturbation, p0[1].perturbation);
        for r in &a {
            assert_eq!(r.perturbation, perturbation(&s, r.replica));
            assert!((r.perturbation.latency_factor - 1.0).abs() <= 1e-9);
        }
        // Another seed, another order.
        let s2 = Study::from_str(
            &STUDY.replace("seed = 3", "seed = 4"),
            Path::new("t.toml"),
            Path::new("/"),
        )
        .unwrap();
        assert_ne!(
            a.iter().map(|r| &r.id).collect::<Vec<_>>(),
            runs(&s2).unwrap().iter().map(|r| &r.id).collect::<Vec<_>>()
        );
    }

    #[test]
    fn listed_points() {
        let text = STUDY.split("[[axis]]").next().unwrap().to_string()
            + "[[point]]\n\"param.size\" = \"1\"\n[[point]]\n\"param.size\" = \"1k\"\n\"platform.bw\" = \"2GBps\"\n";
        let s = Study::from_str(&text, Path::new("t.toml"), Path::new("/")).unwrap();
        let p = points(&s).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(s.axes.len(), 2);
        assert_eq!(p[0].labels[1], ("platform.bw".to_string(), "(base)".to_string()));
    }

    #[test]
    fn replicas_need_a_perturbation() {
        let e = Study::from_str(
            &STUDY.replace("perturb = [\"latency\", \"seed\"]", ""),
            Path::new("t.toml"),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("nothing perturbed"), "{e}");
    }
}
