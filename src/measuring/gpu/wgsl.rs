//! Assembling WGSL: a source is a prelude (enabled extensions, `const` values, type
//! aliases), included libraries (the df64 arithmetic) and a body, in that order, so every
//! generated variant is built one way. Each probe lists the variants it can build
//! (`Probe::kernels`), and a unit test parses and validates every one with naga, so a bad
//! template fails `cargo test` rather than a user's run.

/// A WGSL module under construction.
#[derive(Clone, Debug, Default)]
pub struct WgslSource {
    prelude: String,
    includes: Vec<&'static str>,
    body: String,
}

impl WgslSource {
    /// A module whose last part is `body`.
    pub fn new(body: impl Into<String>) -> WgslSource {
        WgslSource {
            body: body.into(),
            ..WgslSource::default()
        }
    }

    /// `enable NAME;` (e.g. `f16`).
    pub fn enable(mut self, extension: &str) -> WgslSource {
        self.prelude.push_str(&format!("enable {extension};\n"));
        self
    }

    /// `const NAME: u32 = VALUE;`: a value fixed when the source is built (loop trip
    /// counts, register-block sizes). Sizes chosen per pipeline are `override`s instead.
    pub fn const_u32(mut self, name: &str, value: u32) -> WgslSource {
        self.prelude
            .push_str(&format!("const {name}: u32 = {value}u;\n"));
        self
    }

    /// `alias NAME = TYPE;`
    pub fn alias(mut self, name: &str, ty: &str) -> WgslSource {
        self.prelude.push_str(&format!("alias {name} = {ty};\n"));
        self
    }

    /// A library placed between the prelude and the body.
    pub fn include(mut self, library: &'static str) -> WgslSource {
        self.includes.push(library);
        self
    }

    pub fn build(&self) -> String {
        let mut s = self.prelude.clone();
        for lib in &self.includes {
            s.push_str(lib);
            s.push('\n');
        }
        s.push_str(&self.body);
        s
    }
}

/// One kernel variant as a probe builds it at run time: what `Gpu::kernel` is given, less
/// the layout. Listed by `Probe::kernels` for validation without a device.
#[derive(Clone, Debug)]
pub struct KernelSource {
    pub label: String,
    pub source: String,
    pub entry: &'static str,
    pub constants: Vec<(&'static str, f64)>,
}

impl KernelSource {
    pub fn new(
        label: impl Into<String>,
        source: impl Into<String>,
        entry: &'static str,
        constants: &[(&'static str, f64)],
    ) -> KernelSource {
        KernelSource {
            label: label.into(),
            source: source.into(),
            entry,
            constants: constants.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_comes_first_then_libraries_then_the_body() {
        let s = WgslSource::new("fn main() {}")
            .enable("f16")
            .const_u32("TM", 8)
            .alias("In", "f16")
            .include("fn lib() {}")
            .build();
        assert_eq!(
            s,
            "enable f16;\nconst TM: u32 = 8u;\nalias In = f16;\nfn lib() {}\nfn main() {}"
        );
    }
}
