//! How long a scenario's job takes on an instance: its terms split over the GPUs, the
//! collectives that outlast the compute, decoding's batch, and the nodes of a cluster.

use super::*;

/// The collectives of a job on several GPUs: `bytes_per_step` through each GPU's link per
/// step (nccl-tests' convention: an all-gather or reduce-scatter of S bytes moves
/// S x (p-1)/p over p GPUs; an all-reduce twice that), over `steps` steps. Data-parallel
/// training runs them over every GPU of the instance; tensor-parallel serving within each
/// copy of the model. They overlap the compute (prefetching, bucketed gradients, a second
/// micro-batch): only what outlasts it adds time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collectives {
    pub bytes_per_step: f64,
    pub steps: f64,
    pub what: String,
    #[serde(default, skip_serializing_if = "Parallelism::is_data")]
    pub parallelism: Parallelism,
    /// Bytes a step sends all-to-all over every GPU of the job (expert parallelism's
    /// tokens to their experts and back): each GPU sends its 1/n share, (n-1)/n of it away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_to_all: Option<f64>,
}

/// Which GPUs a scenario's collectives run over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parallelism {
    /// Every GPU of the instance (data-parallel training: gradients, sharded state).
    #[default]
    Data,
    /// The GPUs of one copy of a served model (tensor parallel: its activations'
    /// all-reduces); needs `decode`, which decides how many GPUs a copy takes.
    Tensor,
}

impl Parallelism {
    fn is_data(&self) -> bool {
        *self == Parallelism::Data
    }
}

impl Collectives {
    /// Seconds of communication over the whole job on `gpus` GPUs linked at `bus_gbps`.
    pub fn seconds(&self, gpus: f64, bus_gbps: f64) -> f64 {
        if gpus <= 1.0 {
            return 0.0;
        }
        let all_to_all = self.all_to_all.unwrap_or(0.0) / gpus;
        self.steps * (self.bytes_per_step + all_to_all) * (gpus - 1.0) / gpus / (bus_gbps * 1e9)
    }
}

/// How a job runs on an instance, and how long it takes there: the answer of
/// [`Scenario::timing`], for the ranking and the calibration alike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Seconds per job: `compute` plus the communication that outlasts it.
    pub seconds: f64,
    /// The terms and the decode's memory traffic, split over the instance's GPUs.
    pub compute: f64,
    /// Serving: how the GPUs are grouped into copies of the model, and each copy's batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    pub comm: Comm,
    /// Serving: the copy's layout, concurrency and what each request and GPU get.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<super::serving::Point>,
}

/// Serving's layout: `copies` copies of the model, each tensor-parallel over
/// `gpus_per_copy` GPUs, each decoding `batch` sequences at once.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub gpus_per_copy: u32,
    pub copies: u32,
    pub batch: f64,
    /// GB left for the KV cache in each copy.
    pub kv_gb: f64,
}

/// The job's communication on the instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Comm {
    /// No collectives: one GPU, one GPU per copy, or a job that states none.
    None,
    /// Counted over the link: `seconds` of it, `exposed` of them beyond the compute.
    Counted {
        what: String,
        link: String,
        bus_gbps: f64,
        seconds: f64,
        exposed: f64,
    },
    /// The job has collectives, but the instance's interconnect is unknown: not counted.
    NoLink,
}

impl Comm {
    pub fn exposed(&self) -> f64 {
        match self {
            Comm::Counted { exposed, .. } => *exposed,
            _ => 0.0,
        }
    }
}

/// Why a served model does not fit an instance: `memory_gb` usable against `weight_gb`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoRoom {
    pub memory_gb: f64,
    pub weight_gb: f64,
}

impl std::fmt::Display for NoRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.0} GB of memory on the instance leave no room for one sequence's KV cache after {:.0} GB of weights",
            self.memory_gb, self.weight_gb
        )
    }
}

/// Serving's decode phase: every step reads the weights once for the whole batch, and each
/// sequence's KV cache; the batch is what the memory left after the weights holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decode {
    /// Tokens generated in all (requests x output tokens).
    pub tokens: f64,
    /// The weights, read once per step (GB).
    pub weight_gb: f64,
    /// KV cache per token of context (MB).
    pub kv_mb_per_token: f64,
    /// The longest context a sequence reaches (prompt + output tokens); a step reads half
    /// of it on average.
    pub context_tokens: f64,
    /// Most sequences decoded at once (a server's limit; vLLM's default is 256).
    pub max_batch: f64,
    /// Share of the memory the server may use (vLLM's default is 0.9).
    pub memory_use: f64,
}

/// How one instance decodes: the batch its memory holds and the bytes the job reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecodePlan {
    pub batch: f64,
    /// GB left for the KV cache on the whole instance.
    pub kv_gb: f64,
    /// Bytes read over the whole job (weights once per step, plus the batch's KV cache).
    pub bytes: f64,
}

impl Decode {
    /// The plan on an instance of `gpus` adapters with `mem_gb` each, after `other_gb` of
    /// other needs on the whole instance; None when not even one sequence fits.
    pub fn plan(&self, gpus: f64, mem_gb: f64, other_gb: f64) -> Option<DecodePlan> {
        let kv_gb = gpus * mem_gb * self.memory_use - self.weight_gb - other_gb;
        let per_seq_gb = self.kv_mb_per_token * self.context_tokens / 1000.0;
        let fits = (kv_gb / per_seq_gb).floor();
        if fits.is_nan() || fits < 1.0 {
            return None;
        }
        let batch = fits.min(self.max_batch);
        let steps = self.tokens / batch;
        let per_step = self.weight_gb * 1e9 + batch * per_seq_gb * 1e9 / 2.0;
        Some(DecodePlan {
            batch,
            kv_gb,
            bytes: steps * per_step,
        })
    }
}

/// Where a job runs: `nodes` instances of `adapters` GPUs of `mem_gb` each, linked within
/// an instance by `link` and between instances by `net` (each its name and GB/s: the
/// link's all-reduce bus bandwidth, the network's per node), the GPU's spec where known.
#[derive(Clone, Copy, Debug)]
pub struct Placement<'a> {
    pub adapters: u32,
    pub nodes: u32,
    pub mem_gb: f64,
    pub link: Option<(&'a str, f64)>,
    pub net: Option<(&'a str, f64)>,
    pub gpu: Option<&'a GpuSpec>,
}

impl<'a> Placement<'a> {
    /// One instance of `adapters` GPUs, no network, no spec.
    pub fn one_node(adapters: u32, mem_gb: f64, link: Option<(&'a str, f64)>) -> Placement<'a> {
        Placement {
            adapters,
            nodes: 1,
            mem_gb,
            link,
            net: None,
            gpu: None,
        }
    }
}

impl Scenario {
    /// Seconds one job takes on one GPU with the given figure values.
    pub fn seconds_per_job(&self, value_of: impl Fn(Rate) -> f64) -> f64 {
        self.terms
            .iter()
            .map(|t| t.figure.seconds(t.work, value_of(t.figure)))
            .sum()
    }

    pub fn job_name(&self) -> String {
        self.job.as_ref().map_or_else(
            || format!("one unit of the {} scenario", self.id),
            |j| j.name.clone(),
        )
    }

    /// The figures the terms use, each once, in term order (decoding reads memory: triad).
    pub fn figures(&self) -> Vec<Rate> {
        let mut v: Vec<Rate> = Vec::new();
        for t in &self.terms {
            if !v.contains(&t.figure) {
                v.push(t.figure);
            }
        }
        if let Some(s) = &self.serving {
            let scaled = s.block_scaled.then_some(Rate::MatmulF16Matrix);
            for r in std::iter::once(s.engines).chain(scaled) {
                if !v.contains(&r) {
                    v.push(r);
                }
            }
        }
        if (self.decode.is_some() || self.serving.is_some()) && !v.contains(&Rate::StreamTriad) {
            v.push(Rate::StreamTriad);
        }
        v
    }

    /// How the job runs on an instance of `adapters` GPUs of `mem_gb` each, linked by `link`
    /// (its name and all-reduce bus bandwidth, GB/s) if known, with `rate` the value of each
    /// figure on one GPU. Serving takes the layout that finishes first: each divisor of the
    /// GPU count as the GPUs of one tensor-parallel copy of the model, the copies decoding
    /// side by side (a copy's batch is what its memory holds, at most `max_batch`; its
    /// all-reduces run within it). Err: the model fits on no layout.
    pub fn timing(
        &self,
        adapters: u32,
        mem_gb: f64,
        link: Option<(&str, f64)>,
        rate: impl Fn(Rate) -> f64,
    ) -> Result<Timing, NoRoom> {
        let n = adapters.max(1);
        if self.serving.is_some() {
            return self
                .serve_timing(&Placement::one_node(n, mem_gb, link), &rate)
                .map_err(|_| NoRoom {
                    memory_gb: f64::from(n) * mem_gb,
                    weight_gb: self.serving.as_ref().map_or(0.0, |s| s.weight_gb()),
                });
        }
        let terms = self.seconds_per_job(&rate);
        let Some(d) = &self.decode else {
            let compute = terms / f64::from(n);
            let comm = self.comm(n, 1, compute, link);
            return Ok(Timing {
                seconds: compute + comm.exposed(),
                compute,
                layout: None,
                comm,
                serving: None,
            });
        };
        let mut best: Option<Timing> = None;
        for t in (1..=n).filter(|t| n.is_multiple_of(*t)) {
            let Some(plan) = self.decode_on(f64::from(t), mem_gb) else {
                continue;
            };
            let memory = Rate::StreamTriad.seconds(plan.bytes, rate(Rate::StreamTriad));
            let compute = (terms + memory) / f64::from(n);
            let comm = self.comm(t, n / t, compute, link);
            let timing = Timing {
                seconds: compute + comm.exposed(),
                compute,
                serving: None,
                layout: Some(Layout {
                    gpus_per_copy: t,
                    copies: n / t,
                    batch: plan.batch,
                    kv_gb: plan.kv_gb,
                }),
                comm,
            };
            // Fewer GPUs a copy win a tie: less to go wrong, no faster layout skipped.
            if best
                .as_ref()
                .is_none_or(|b| timing.seconds < b.seconds * (1.0 - 1e-9))
            {
                best = Some(timing);
            }
        }
        best.ok_or(NoRoom {
            memory_gb: f64::from(n) * mem_gb * d.memory_use,
            weight_gb: d.weight_gb,
        })
    }

    /// How the job runs on `nodes` instances of `adapters` GPUs each: the
    /// terms split over every GPU, the state sharded over all of them, and the data-parallel
    /// collectives run hierarchically: within a node over `link` (its all-reduce bus
    /// bandwidth) and, for the node's shard, between nodes over `net` (its name and the
    /// node's total GB/s): `bytes_per_step x (nodes-1)/nodes` through each node's network a
    /// step. They overlap the compute as on one node; only what outlasts it adds time. One
    /// node is [`Scenario::timing`]. Err: why the job cannot run on several nodes.
    pub fn timing_nodes(
        &self,
        at: &Placement<'_>,
        rate: impl Fn(Rate) -> f64,
    ) -> Result<Timing, String> {
        let (adapters, nodes, mem_gb, link, net) =
            (at.adapters, at.nodes, at.mem_gb, at.link, at.net);
        if self.serving.is_some() {
            let at = Placement {
                adapters: adapters.max(1),
                nodes: nodes.max(1),
                ..*at
            };
            return self.serve_timing(&at, &rate);
        }
        if nodes <= 1 {
            return self
                .timing(adapters, mem_gb, link, rate)
                .map_err(|e| e.to_string());
        }
        if self.decode.is_some() {
            return Err("serving on several nodes is not modelled: a served model scales by whole instances (--request-rate), and one that fits no instance would need pipeline parallelism between nodes".into());
        }
        let Some((net_name, net_gb)) = net else {
            return Err("the network between nodes of this instance type is not published (src/data/networks.json): not ranked on several nodes".into());
        };
        let n = adapters.max(1);
        let compute = self.seconds_per_job(&rate) / f64::from(n * nodes);
        let comm = match &self.collectives {
            None => Comm::None,
            Some(c) => {
                let intra = link.map_or(0.0, |(_, bus)| c.seconds(f64::from(n), bus));
                let inter = c.steps * c.bytes_per_step * f64::from(nodes - 1)
                    / f64::from(nodes)
                    / (net_gb * 1e9);
                let within = match link {
                    Some((name, bus)) => format!("{name} ({bus} GB/s bus) within a node, "),
                    None if n > 1 => "the link within a node not known (not counted), ".into(),
                    None => String::new(),
                };
                let seconds = intra + inter;
                Comm::Counted {
                    what: c.what.clone(),
                    link: format!(
                        "{within}{net_name} ({net_gb} GB/s a node) between {nodes} nodes"
                    ),
                    bus_gbps: link.map_or(net_gb, |l| l.1),
                    seconds,
                    exposed: (seconds - compute).max(0.0),
                }
            }
        };
        Ok(Timing {
            seconds: compute + comm.exposed(),
            compute,
            layout: None,
            comm,
            serving: None,
        })
    }

    /// Serving on `nodes` nodes of `adapters` GPUs: the fastest copy (layout and
    /// concurrency) for the target, as many copies as the GPUs hold side by side. A copy
    /// larger than a node runs its collectives over the network between nodes, except in a
    /// rack-scale NVLink domain (GB200 / GB300 NVL72: up to 72 GPUs on one link).
    fn serve_timing(
        &self,
        at: &Placement<'_>,
        rate: &impl Fn(Rate) -> f64,
    ) -> Result<Timing, String> {
        let Placement {
            adapters,
            nodes,
            mem_gb,
            link,
            net,
            gpu,
        } = *at;
        let s = self.serving.as_ref().expect("called for serving");
        let total = adapters * nodes;
        // A provider that publishes no network between its nodes gets a stated, modest one,
        // never a free one: publishing a network must not make a provider look worse.
        let net =
            net.or((nodes > 1).then_some((serving::ASSUMED_NETWORK, serving::ASSUMED_NETWORK_GBS)));
        let rack = gpu.is_some_and(|g| matches!(g.id.as_str(), "gb200" | "gb300")) && total <= 72;
        let m = serving::Machine {
            mem_gb,
            bandwidth: rate(Rate::StreamTriad),
            flops: rate(s.engines_on(gpu)),
            bus_gbps: link.map(|l| l.1),
            node_gpus: if rack { total } else { adapters },
            net_gbps: net.map(|n| n.1 / f64::from(adapters)),
            fit: serving::fits().for_engine(gpu.map_or("", |g| g.vendor.as_str()), s.engine),
        };
        let pt = s.best_on(total, &m)?;
        let copies = f64::from(total / pt.gpus);
        // Output tokens a second over every copy (a speculative step emits several a request).
        let seconds = s.tokens / (copies * pt.tok_s_per_gpu * f64::from(pt.gpus));
        let steps = seconds / pt.step_s;
        let comm = if pt.gpus <= 1 {
            Comm::None
        } else {
            let over = if pt.gpus > m.node_gpus {
                net.map(|n| n.0)
            } else {
                link.map(|l| l.0)
            };
            match (
                over,
                if pt.gpus > m.node_gpus {
                    m.net_gbps
                } else {
                    m.bus_gbps
                },
            ) {
                (Some(name), Some(bus)) => Comm::Counted {
                    what: format!("{} collectives", pt.parallel.label()),
                    link: name.to_string(),
                    bus_gbps: bus,
                    seconds: pt.comm_s * steps,
                    exposed: pt.comm_s * steps,
                },
                _ => Comm::NoLink,
            }
        };
        Ok(Timing {
            seconds,
            compute: seconds - comm.exposed(),
            layout: Some(Layout {
                gpus_per_copy: pt.gpus,
                copies: copies as u32,
                batch: pt.concurrency,
                kv_gb: s.kv_room_per_gpu(&pt.parallel, mem_gb) * f64::from(pt.gpus),
            }),
            comm,
            serving: Some(pt),
        })
    }

    /// The collectives over `group` GPUs (all of them for data parallelism, a copy's for
    /// tensor parallelism), `copies` groups communicating side by side, against `compute`.
    fn comm(&self, group: u32, copies: u32, compute: f64, link: Option<(&str, f64)>) -> Comm {
        let Some(c) = &self.collectives else {
            return Comm::None;
        };
        let over = match c.parallelism {
            Parallelism::Data => group * copies,
            Parallelism::Tensor => group,
        };
        if over <= 1 {
            return Comm::None;
        }
        let Some((name, bus)) = link else {
            return Comm::NoLink;
        };
        let share = match c.parallelism {
            Parallelism::Data => 1.0,
            Parallelism::Tensor => f64::from(copies),
        };
        let seconds = c.seconds(f64::from(over), bus) / share;
        Comm::Counted {
            what: c.what.clone(),
            link: name.to_string(),
            bus_gbps: bus,
            seconds,
            exposed: (seconds - compute).max(0.0),
        }
    }

    /// How the decode runs on `adapters` GPUs of `mem_gb` each, after the scenario's other
    /// needs (its per-GPU floor on every GPU, its sharded memory once); None without a decode
    /// or when not one sequence fits.
    pub fn decode_on(&self, adapters: f64, mem_gb: f64) -> Option<DecodePlan> {
        let own = self.memory_floor_gb().unwrap_or(0.0);
        let sharded: f64 = self.sharded_memory.iter().map(|m| m.gb).sum();
        self.decode
            .as_ref()?
            .plan(adapters, mem_gb, sharded + adapters * own)
    }

    /// Memory each of `gpus` adapters needs: its own needs plus its share of the sharded
    /// ones (and of the weights a decode reads). None: the scenario states no floor.
    pub fn memory_floor_on(&self, gpus: u32) -> Option<f64> {
        let shared: f64 = self.sharded_memory.iter().map(|m| m.gb).sum::<f64>()
            + self.decode.as_ref().map_or(0.0, |d| d.weight_gb)
            + self.serving.as_ref().map_or(0.0, |s| s.weight_gb());
        let own = self.memory_floor_gb();
        if shared == 0.0 {
            return own;
        }
        Some(own.unwrap_or(0.0) + shared / f64::from(gpus.max(1)))
    }

    /// Memory one GPU (adapter) needs: the sum of the stated needs, or version 1's number,
    /// whichever is larger. None: the scenario states no floor.
    pub fn memory_floor_gb(&self) -> Option<f64> {
        let sum: f64 = self.memory_floor.iter().map(|m| m.gb).sum();
        match (self.min_gpu_memory_gb, self.memory_floor.is_empty()) {
            (None, true) => None,
            (m, _) => Some(sum.max(m.unwrap_or(0.0))),
        }
    }

    /// The model in one line: time per GPU as its terms, and the floors.
    pub fn model_line(&self) -> String {
        if let Some(s) = &self.serving {
            return s.model_line();
        }
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| match t.figure {
                Rate::LatencyDispatch => {
                    format!("{:.3e} {} x {}", t.work, t.unit, t.figure.label())
                }
                f => format!("{:.3e} {} / {}", t.work, t.unit, f.label()),
            })
            .collect();
        let mut line = format!("time per GPU = {}", terms.join(" + "));
        if let Some(d) = &self.decode {
            line.push_str(&format!(
                " + decode: {:.3e} tokens, each step reading the {} GB of weights once for the batch and {} MB of KV cache per token of context (up to {} tokens), the batch as large as {:.0}% of the memory holds (at most {})",
                d.tokens,
                round2(d.weight_gb),
                round2(d.kv_mb_per_token),
                d.context_tokens,
                d.memory_use * 100.0,
                d.max_batch
            ));
        }
        if let Some(c) = &self.collectives {
            line.push_str(&format!(
                " + on several GPUs: {:.3e} steps of {:.3e} bytes of {} over the GPUs' interconnect, the part that outlasts the compute",
                c.steps, c.bytes_per_step, c.what
            ));
        }
        if let Some(d) = &self.decode {
            // A served model: each copy holds the weights and at least one sequence's KV
            // cache, split over the copy's GPUs, on top of each GPU's own floor.
            line.push_str(&format!(
                "; needs per copy of the model {} GB of weights and {} GB of KV cache for each sequence of {} tokens, split over the copy's GPUs",
                round2(d.weight_gb),
                round2(d.kv_mb_per_token * d.context_tokens / 1000.0),
                d.context_tokens
            ));
            if let Some(gb) = self.memory_floor_gb() {
                line.push_str(&format!(", plus {} GB on every GPU", round2(gb)));
            }
        } else if let Some(gb) = self.memory_floor_gb() {
            line.push_str(&format!("; needs {} GB per GPU", round2(gb)));
        }
        if !self.sharded_memory.is_empty() {
            let gb: f64 = self.sharded_memory.iter().map(|m| m.gb).sum();
            line.push_str(&format!(
                "{} {} GB split over the instance's GPUs",
                if self.memory_floor_gb().is_some() {
                    " plus"
                } else {
                    "; needs"
                },
                round2(gb)
            ));
        }
        if let Some(v) = self.min_vcpus_per_gpu {
            line.push_str(&format!(" and {v} vCPUs per GPU"));
        }
        line
    }
}
