//! The costing of one instance: its price, the job's timing on it, and the row.

use super::*;

/// Everything needed to cost one catalog instance.
pub(super) struct Costing<'a> {
    pub(super) catalog: &'a Catalog,
    pub(super) findings: &'a [Finding],
    pub(super) scenario: &'a Scenario,
    pub(super) figures: &'a [Rate],
    pub(super) resolver: &'a Resolver,
    pub(super) opts: &'a RankOptions,
    /// Each GPU's board power as results files measured it.
    pub(super) watts: &'a super::energy::Watts,
}

/// What costing one catalog instance came to.
pub(super) enum Costed {
    /// The ranked row and the efficiency factors behind it.
    Ranked(Box<RankRow>, Vec<Efficiency>),
    /// Selected by the filters but not ranked, and why (listed under `--details`).
    Excluded(String),
    /// The filters leave it out: not listed at all.
    NotSelected,
}

/// How many GPUs a job runs on: per node, and how many nodes.
#[derive(Clone, Copy)]
struct Span {
    per_node: u32,
    nodes: u32,
}

impl Span {
    fn gpus(self) -> u32 {
        self.per_node * self.nodes
    }
}

/// The job's duration on an instance: its timing, the hours it takes (spot's expected
/// hours with the work redone), and the fleet a steady rate needs.
struct Duration<'m> {
    timing: Timing,
    measured: Option<&'m crate::value::serving_results::Measured>,
    hours: f64,
    risk: Option<SpotRisk>,
    steady: Option<(Steady, f64)>,
}

impl Costing<'_> {
    /// What instance `i` comes to: ranked, excluded (why), or not selected by the filters.
    /// `Err` only where the inputs cannot be costed at all (a currency without a rate).
    pub(super) fn row(&self, i: usize, inst: &Instance) -> Result<Costed> {
        let Some(gpu) = self.catalog.gpu(&inst.gpu) else {
            // The filters first: an instance they leave out is not a reason nothing ranks.
            if self.opts.filters.admit(inst, None, None) == Admission::NotSelected {
                return Ok(Costed::NotSelected);
            }
            return Ok(Costed::Excluded(not_a_catalog_gpu(&inst.gpu)));
        };
        // A job that shards (weights, optimizer state, a served model) needs its share per
        // GPU, over every GPU of every node it runs on.
        let per_node = inst.gpu_count * gpu.adapters();
        let span = Span {
            per_node,
            nodes: self.nodes_for(per_node, gpu),
        };
        let admission =
            self.opts
                .filters
                .admit(inst, Some(gpu), self.scenario.memory_floor_on(span.gpus()));
        if admission == Admission::NotSelected {
            return Ok(Costed::NotSelected);
        }
        if let Some(why) = self.refusal(i, inst, gpu, admission) {
            return Ok(Costed::Excluded(why));
        }
        self.cost(i, inst, gpu, span)
    }

    /// Why a selected instance cannot rank before it is priced, if it cannot.
    fn refusal(
        &self,
        i: usize,
        inst: &Instance,
        gpu: &GpuSpec,
        admission: Admission,
    ) -> Option<String> {
        if let Some(why) = self.row_errors(i) {
            return Some(format!("catalog error: {why}"));
        }
        if let Admission::TooSmall(why) = admission {
            return Some(why);
        }
        if let Some(why) = self.host_floor(inst) {
            return Some(why);
        }
        if let Some(date) = &inst.retired {
            return Some(format!("retired on {date}: no longer sold"));
        }
        self.precision_refused(gpu)
    }

    /// The figures the job's rates resolve to on `gpu`, and the efficiency factors behind
    /// them; why not, where one has neither a measurement nor a datasheet figure.
    fn uses(&self, gpu: &GpuSpec) -> Result<(Vec<FigureUse>, Vec<Efficiency>), String> {
        let mut uses = Vec::new();
        let mut factors = Vec::new();
        for &fig in self.figures {
            let Some((u, e)) = self.resolver.resolve(fig, gpu) else {
                return Err(format!(
                    "no {} figure for {}: not measured, no datasheet figure",
                    fig.name(),
                    gpu.name
                ));
            };
            uses.push(u);
            factors.extend(e);
        }
        Ok((uses, factors))
    }

    /// How long the job takes on the instance, from the figures it uses (or the measured
    /// serving run on that GPU), with spot's redone work and a steady rate's fleet.
    fn duration<'s>(
        &'s self,
        inst: &Instance,
        gpu: &GpuSpec,
        span: Span,
        uses: &[FigureUse],
        price: &crate::market::catalog::Price,
    ) -> Result<Duration<'s>, String> {
        // Figures are per adapter; an instance runs gpu_count packages of `adapters` each.
        let measured = self.measured_serving(gpu, span.gpus());
        let mut timing = self.timing(inst, gpu, span.per_node, span.nodes, uses)?;
        if let Some(m) = measured {
            self.use_measured(&mut timing, m, span.gpus());
        }
        let mut hours = timing.seconds / 3600.0;
        // Spot capacity is taken back: the expected time with the work redone.
        let risk = (self.opts.pricing == PricingModel::Spot).then(|| {
            spot::expected(
                hours,
                price.interruption.as_ref(),
                self.opts.checkpointing,
                self.scenario.decode.is_some() || self.scenario.serving.is_some(),
            )
        });
        if let Some(r) = &risk {
            hours = r.expected_hours;
        }
        // A steady rate: the job lasts its hours on every instance, on as many as keep up.
        let steady = self.steady(hours)?;
        Ok(Duration {
            timing,
            measured,
            hours,
            risk,
            steady,
        })
    }

    /// The priced, timed row of a selected instance, or why it cannot rank.
    fn cost(&self, i: usize, inst: &Instance, gpu: &GpuSpec, span: Span) -> Result<Costed> {
        let (price, per_hour) = match self.priced(inst, gpu, span.nodes)? {
            Ok(x) => x,
            Err(why) => return Ok(Costed::Excluded(why)),
        };
        let (uses, factors) = match self.uses(gpu) {
            Ok(x) => x,
            Err(why) => return Ok(Costed::Excluded(why)),
        };
        let d = match self.duration(inst, gpu, span, &uses, price) {
            Ok(d) => d,
            Err(why) => return Ok(Costed::Excluded(why)),
        };
        let (hours, fleet_per_hour) = match d.steady {
            Some((s, h)) => (h, per_hour * f64::from(s.instances)),
            None => (d.hours, per_hour),
        };
        let cost = fleet_per_hour * hours;
        // Every ranked cost is a finite positive amount, whatever the inputs came to.
        if !(cost.is_finite() && cost > 0.0 && hours.is_finite() && hours > 0.0) {
            return Ok(Costed::Excluded(format!(
                "cost per job works out to {cost} (price {per_hour}/h, {hours} h per job): not a finite positive amount"
            )));
        }
        let mut row = self.ranked(i, inst, gpu, uses, fleet_per_hour, hours);
        row.price_per_hour = per_hour;
        row.nodes = span.nodes;
        row.steady = d.steady.map(|(s, _)| s);
        // The link, where the job's collectives ran over it.
        if matches!(d.timing.comm, crate::value::scenario::Comm::Counted { .. }) {
            row.link = crate::market::catalog::links::of(inst, gpu);
        }
        row.serving = self.serve_row(&d.timing, per_hour, span.gpus(), d.measured)?;
        if d.measured.is_some() {
            row.basis = Source::Measured;
        }
        row.timing = Some(d.timing);
        row.spot = d.risk;
        row.energy = super::energy::of(&row, gpu, self.opts.power, self.watts.get(&gpu.id));
        self.add_egress(&mut row)?;
        Ok(Costed::Ranked(Box::new(row), factors))
    }

    /// Why the job's 8-bit or 4-bit float matmuls cannot run on `gpu` as frameworks run
    /// them, if they cannot: training in FP8 needs FP8 engines (Transformer Engine's FP8
    /// GEMMs: Ada, Hopper and later); serving FP8 or FP4 weights without FP8/FP4 engines
    /// dequantises them for the FP16 engines (vLLM's FP8 Marlin kernels), which needs
    /// Ampere or newer on NVIDIA and CDNA 3 or newer on AMD. Where the weights dequantise,
    /// the row names the FP16 engines it uses.
    pub(super) fn precision_refused(&self, gpu: &GpuSpec) -> Option<String> {
        let wants = |r: Rate| self.figures.contains(&r);
        let fp8 = wants(Rate::MatmulFp8Matrix) || wants(Rate::LlmTrainFp8Matrix);
        let fp4 = wants(Rate::MatmulFp4Matrix);
        if !(fp8 || fp4) {
            return None;
        }
        let has = |r: Rate| r.datasheet(gpu).is_some() || self.resolver.median_of(gpu, r).is_some();
        if has(Rate::MatmulFp8Matrix) || (fp4 && has(Rate::MatmulFp4Matrix)) {
            return None;
        }
        let what = if fp4 { "FP4" } else { "FP8" };
        if self.scenario.decode.is_none() && self.scenario.serving.is_none() {
            return Some(format!(
                "{} has no {what} matrix engines: {what} training runs on Ada, Hopper, Blackwell or CDNA 3 and later; train it in fp16",
                gpu.name
            ));
        }
        let old = ["pascal", "volta", "turing", "cdna1", "cdna2"];
        match gpu.arch.as_deref() {
            Some(a) if old.contains(&a) => Some(format!(
                "{} ({a}) has no FP8 or FP4 matrix engines, and serving frameworks dequantise {what} weights only on Ampere / CDNA 3 and later: serve it in fp16 or int4",
                gpu.name
            )),
            _ => None,
        }
    }

    /// The instance's price in the kind and currency asked for, for `nodes` of it: per hour
    /// with the price it came from; Ok(Err) says why it cannot be ranked on price.
    pub(super) fn priced<'c>(
        &'c self,
        inst: &'c Instance,
        gpu: &GpuSpec,
        nodes: u32,
    ) -> Result<Result<(&'c crate::market::catalog::Price, f64), String>> {
        if nodes > 1 && self.opts.pricing == PricingModel::Spot {
            return Ok(Err(format!(
                "spot on {nodes} nodes is not modelled (an interruption of any node stops the job)"
            )));
        }
        let Some(price) = inst.prices.get(&self.opts.pricing) else {
            let model = self.opts.pricing;
            let feed = crate::market::catalog::COMMITMENT_FEEDS
                .iter()
                .find(|f| f.0 == inst.provider && model.is_commitment());
            return Ok(Err(match feed {
                Some((_, source)) => format!(
                    "no {} price here: `gpuvalue catalog update --source {source}` reads the provider's own 1- and 3-year terms",
                    model.name()
                ),
                None => format!("no {} price", model.name()),
            }));
        };
        if inst.tier(price) == Tier::Reported && !self.opts.include_reported {
            return Ok(Err(
                "reported price (unverified: not a list price); --include-reported ranks it, marked"
                    .into(),
            ));
        }
        // Spot prices move by the hour: one months old says little of today's, so it does not
        // lead a ranking unless asked for.
        let as_of = price.as_of.as_deref().unwrap_or(&inst.as_of);
        if self.opts.pricing == PricingModel::Spot
            && !self.opts.include_reported
            && let Some(m) = crate::files::months_ago(as_of).filter(|m| *m > STALE_SPOT_MONTHS)
        {
            return Ok(Err(format!(
                "stale spot price: as of {as_of}, {m} months ago (spot prices change by the hour; over {STALE_SPOT_MONTHS} months is not ranked); --include-reported ranks it, marked, or `gpuvalue catalog update` takes a current one"
            )));
        }
        let (bad_gpus, bad_currencies) = Catalog::bad_entries(self.findings);
        if bad_gpus.contains(&gpu.id) {
            return Ok(Err(format!(
                "catalog error in the entry of GPU {:?}",
                gpu.id
            )));
        }
        if let Some(c) = [&price.currency, &self.opts.currency]
            .into_iter()
            .find(|c| bad_currencies.contains(c))
        {
            return Ok(Err(format!("catalog error in the exchange rate of {c}")));
        }
        let per_hour = self
            .catalog
            .convert(price.amount, &price.currency, &self.opts.currency)?
            * f64::from(nodes);
        Ok(Ok((price, per_hour)))
    }

    /// For a job at a steady rate (its `steady_hours`), the instances that keep up when one
    /// takes `hours` for the whole job, with the job's hours; None for a job of fixed size.
    pub(super) fn steady(&self, hours: f64) -> Result<Option<(Steady, f64)>, String> {
        let Some(h) = self.scenario.job.as_ref().and_then(|j| j.steady_hours) else {
            return Ok(None);
        };
        let need = hours / h;
        // Whole instances; a hair over a whole number is rounding, not another instance.
        let n = (need * (1.0 - 1e-9)).ceil().max(1.0);
        if !(n.is_finite() && n <= 1e6) {
            return Err(format!(
                "{need:.3e} instances would be needed to keep up with the rate (more than a million)"
            ));
        }
        Ok(Some((
            Steady {
                instances: n as u32,
                load: need / n,
            },
            h,
        )))
    }

    /// Why the instance's host cannot feed its GPUs (the scenario's vCPUs per GPU), if so.
    pub(super) fn host_floor(&self, inst: &Instance) -> Option<String> {
        let need = self.scenario.min_vcpus_per_gpu?;
        // Unknown vCPUs: ranked, with a warning (see `ranked`).
        let vcpu = inst.vcpu?;
        let per_gpu = f64::from(vcpu) / f64::from(inst.gpu_count.max(1));
        (per_gpu < need).then(|| {
            format!("{per_gpu} vCPUs per GPU < {need} needed to feed each GPU (host floor)")
        })
    }

    /// The catalog errors of instance `i`, joined; None when it has none.
    pub(super) fn row_errors(&self, i: usize) -> Option<String> {
        let why: Vec<String> = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Error && x.instance == Some(i))
            .map(|x| x.message.clone())
            .collect();
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// How one job runs on the instance (`adapters` GPUs) and how long it takes: the terms
    /// split over the GPUs, serving in the layout that finishes first, and the collectives
    /// that outlast the compute ([`Scenario::timing`]). Err: why the job cannot run there.
    pub(super) fn timing(
        &self,
        inst: &Instance,
        gpu: &GpuSpec,
        adapters: u32,
        nodes: u32,
        uses: &[FigureUse],
    ) -> Result<Timing, String> {
        let mem = gpu.memory_per_adapter_gb().unwrap_or(0.0);
        let link = crate::market::catalog::links::of(inst, gpu);
        let link = link.as_ref().map(|l| (l.kind.as_str(), l.bus_gbps));
        let net = crate::market::catalog::networks::of(&inst.provider, &inst.instance_type)
            .map(|n| (n.kind.as_str(), n.gb_per_s()));
        let at = crate::value::scenario::Placement {
            adapters,
            nodes,
            mem_gb: mem,
            link,
            net,
            gpu: Some(gpu),
        };
        self.scenario.timing_nodes(&at, value_in(uses))
    }

    /// The nodes the job runs on for an instance of `per_node` adapters: the number asked
    /// for, or (auto) the fewest whose memory holds the job's sharded state.
    pub(super) fn nodes_for(&self, per_node: u32, gpu: &GpuSpec) -> u32 {
        match self.opts.nodes {
            Nodes::Fixed(n) => n.max(1),
            Nodes::Auto => {
                let mem = gpu.memory_per_adapter_gb().unwrap_or(0.0);
                (1..=Nodes::MOST)
                    .find(|n| {
                        self.scenario
                            .memory_floor_on(per_node * n)
                            .is_none_or(|need| need <= mem)
                    })
                    .unwrap_or(Nodes::MOST)
            }
        }
    }

    pub(super) fn ranked(
        &self,
        i: usize,
        inst: &Instance,
        gpu: &GpuSpec,
        uses: Vec<FigureUse>,
        per_hour: f64,
        hours: f64,
    ) -> RankRow {
        let cost = per_hour * hours;
        // The row's warnings, less those about its other prices (a stale spot price does not
        // concern an on-demand ranking).
        let this = format!(".prices.{}.", self.opts.pricing.name());
        let mut warnings: Vec<String> = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Warning && x.instance == Some(i))
            .filter(|x| !x.path.contains(".prices.") || x.path.contains(&this))
            .map(|x| x.message.clone())
            .collect();
        if let (Some(need), None) = (self.scenario.min_vcpus_per_gpu, inst.vcpu) {
            warnings.push(format!(
                "vCPU count unknown: the scenario's host floor ({need} vCPUs per GPU) is not checked"
            ));
        }
        let budget = self.opts.budget;
        RankRow {
            rank: 0,
            place: 0,
            tied: false,
            provider: inst.provider.clone(),
            instance_type: inst.instance_type.clone(),
            region: inst.region.clone(),
            gpu: gpu.id.clone(),
            gpu_name: gpu.name.clone(),
            gpu_count: inst.gpu_count,
            nodes: 1,
            basis: if uses.iter().all(|u| u.source == Source::Measured) {
                Source::Measured
            } else {
                Source::Estimated
            },
            figures: uses,
            price_per_hour: per_hour,
            currency: self.opts.currency.clone(),
            pricing: self.opts.pricing,
            price_as_of: inst
                .prices
                .get(&self.opts.pricing)
                .map_or(&inst.as_of[..], |p| p.as_of(inst))
                .to_string(),
            price_confidence: format!("{:?}", inst.confidence).to_lowercase(),
            price_tier: inst
                .prices
                .get(&self.opts.pricing)
                .map_or(Tier::List, |p| inst.tier(p)),
            hours_per_job: hours,
            jobs_per_hour: 1.0 / hours,
            cost_per_job: cost,
            jobs_per_currency_unit: 1.0 / cost,
            budget_hours: budget.map(|b| b / per_hour),
            budget_jobs: budget.map(|b| b / per_hour / hours),
            warnings,
            steady: None,
            timing: None,
            link: None,
            spot: None,
            egress: None,
            serving: None,
            energy: None,
        }
    }

    /// Adds the job's data out of the cloud to `row`'s cost at its provider's published
    /// price; a provider with none is marked, its data not counted.
    pub(super) fn add_egress(&self, row: &mut RankRow) -> Result<()> {
        let Some(need) = self.scenario.egress.as_ref().filter(|e| e.gb > 0.0) else {
            return Ok(());
        };
        let Some(e) = crate::market::catalog::egress::of(&row.provider) else {
            row.egress = Some(EgressCost {
                gb: need.gb,
                per_gb: None,
                cost: None,
                source: None,
                secondary: false,
            });
            return Ok(());
        };
        let per_gb = self
            .catalog
            .convert(e.per_gb(), &e.currency, &self.opts.currency)?;
        let cost = per_gb * need.gb;
        row.cost_per_job += cost;
        row.jobs_per_currency_unit = 1.0 / row.cost_per_job;
        if let Some(b) = self.opts.budget {
            row.budget_jobs = Some(b / row.cost_per_job);
        }
        row.egress = Some(EgressCost {
            gb: need.gb,
            per_gb: Some(per_gb),
            cost: Some(cost),
            source: Some(format!("{} ({}, as of {})", e.source, e.tier, e.as_of)),
            secondary: e.secondary,
        });
        Ok(())
    }
}
