//! Where a catalog row's region is: its country (ISO 3166 code) and area, read from the
//! naming schemes the providers and feeds use (AWS, GCP, Azure, OCI, Alibaba, Tencent,
//! Huawei, Lambda, Nebius, RunPod's country codes, Vast's "City, CC, AREA"), so that
//! `--region china` or `--region eu` selects by place and not by a substring of the name
//! (`--region cn` once missed Tencent's `ap-beijing`). A region no scheme places
//! (`any`, `earth`, `default`) has no place: a place filter leaves it out, and says so.

/// A region's place: country code and area code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub country: &'static str,
    pub area: &'static str,
}

/// The areas, with the words a user may give for each.
const AREAS: &[(&str, &[&str])] = &[
    ("na", &["na", "northamerica", "north-america"]),
    ("sa", &["sa", "southamerica", "south-america", "latam"]),
    ("eu", &["eu", "europe"]),
    ("as", &["as", "asia", "apac"]),
    ("oc", &["oc", "oceania"]),
    ("me", &["me", "middleeast", "middle-east"]),
    ("af", &["af", "africa"]),
];

/// Countries: code, area, and the words (names, other codes) a user or a region name uses.
const COUNTRIES: &[(&str, &str, &[&str])] = &[
    (
        "US",
        "na",
        &["us", "usa", "unitedstates", "united-states", "america"],
    ),
    ("CA", "na", &["ca", "canada"]),
    ("MX", "na", &["mx", "mexico"]),
    ("BR", "sa", &["br", "brazil"]),
    ("CL", "sa", &["cl", "chile"]),
    ("CN", "as", &["cn", "china", "prc", "mainland"]),
    ("HK", "as", &["hk", "hongkong", "hong-kong"]),
    ("TW", "as", &["tw", "taiwan"]),
    ("JP", "as", &["jp", "japan"]),
    ("KR", "as", &["kr", "korea", "southkorea"]),
    ("SG", "as", &["sg", "singapore"]),
    ("IN", "as", &["in", "india"]),
    ("ID", "as", &["id", "indonesia"]),
    ("TH", "as", &["th", "thailand"]),
    ("MY", "as", &["my", "malaysia"]),
    ("VN", "as", &["vn", "vietnam"]),
    ("PH", "as", &["ph", "philippines"]),
    ("KZ", "as", &["kz", "kazakhstan"]),
    ("AU", "oc", &["au", "australia"]),
    ("NZ", "oc", &["nz", "newzealand"]),
    ("GB", "eu", &["gb", "uk", "unitedkingdom", "britain"]),
    ("IE", "eu", &["ie", "ireland"]),
    ("DE", "eu", &["de", "germany"]),
    ("FR", "eu", &["fr", "france"]),
    ("NL", "eu", &["nl", "netherlands", "holland"]),
    ("BE", "eu", &["be", "belgium"]),
    ("CH", "eu", &["ch", "switzerland"]),
    ("AT", "eu", &["at", "austria"]),
    ("IT", "eu", &["it", "italy"]),
    ("ES", "eu", &["es", "spain"]),
    ("PT", "eu", &["pt", "portugal"]),
    ("SE", "eu", &["se", "sweden"]),
    ("NO", "eu", &["no", "norway"]),
    ("FI", "eu", &["fi", "finland", "fin"]),
    ("DK", "eu", &["dk", "denmark"]),
    ("IS", "eu", &["is", "iceland", "ice"]),
    ("PL", "eu", &["pl", "poland"]),
    ("CZ", "eu", &["cz", "czechia", "czech"]),
    ("RO", "eu", &["ro", "romania"]),
    ("BG", "eu", &["bg", "bulgaria"]),
    ("HU", "eu", &["hu", "hungary"]),
    ("GR", "eu", &["gr", "greece"]),
    ("EE", "eu", &["ee", "estonia"]),
    ("LT", "eu", &["lt", "lithuania"]),
    ("LV", "eu", &["lv", "latvia"]),
    ("UA", "eu", &["ua", "ukraine"]),
    ("RS", "eu", &["rs", "serbia"]),
    ("HR", "eu", &["hr", "croatia"]),
    ("SK", "eu", &["sk", "slovakia"]),
    ("SI", "eu", &["si", "slovenia"]),
    ("LU", "eu", &["lu", "luxembourg"]),
    ("RU", "eu", &["ru", "russia"]),
    ("TR", "eu", &["tr", "turkey", "turkiye"]),
    ("IL", "me", &["il", "israel"]),
    ("AE", "me", &["ae", "uae", "emirates"]),
    ("SA", "me", &["saudi", "saudiarabia", "ksa"]),
    ("QA", "me", &["qa", "qatar"]),
    ("BH", "me", &["bh", "bahrain"]),
    ("ZA", "af", &["za", "southafrica"]),
    ("MA", "af", &["ma", "morocco"]),
    ("NG", "af", &["ng", "nigeria"]),
    ("KE", "af", &["ke", "kenya"]),
    ("EG", "af", &["eg", "egypt"]),
];

/// Cities and words in region names that name a country (Tencent's `ap-beijing`, OCI's
/// `eu-frankfurt-1`, Azure's `germanywestcentral`).
const CITIES: &[(&str, &str)] = &[
    ("beijing", "CN"),
    ("shanghai", "CN"),
    ("guangzhou", "CN"),
    ("shenzhen", "CN"),
    ("hangzhou", "CN"),
    ("chengdu", "CN"),
    ("chongqing", "CN"),
    ("nanjing", "CN"),
    ("wulanchabu", "CN"),
    ("zhangjiakou", "CN"),
    ("huhehaote", "CN"),
    ("qingdao", "CN"),
    ("heyuan", "CN"),
    ("guiyang", "CN"),
    ("wuhan", "CN"),
    ("hongkong", "HK"),
    ("taipei", "TW"),
    ("tokyo", "JP"),
    ("osaka", "JP"),
    ("seoul", "KR"),
    ("chuncheon", "KR"),
    ("singapore", "SG"),
    ("mumbai", "IN"),
    ("hyderabad", "IN"),
    ("delhi", "IN"),
    ("jakarta", "ID"),
    ("bangkok", "TH"),
    ("kualalumpur", "MY"),
    ("manila", "PH"),
    ("sydney", "AU"),
    ("melbourne", "AU"),
    ("auckland", "NZ"),
    ("frankfurt", "DE"),
    ("berlin", "DE"),
    ("munich", "DE"),
    ("london", "GB"),
    ("manchester", "GB"),
    ("dublin", "IE"),
    ("paris", "FR"),
    ("marseille", "FR"),
    ("amsterdam", "NL"),
    ("brussels", "BE"),
    ("zurich", "CH"),
    ("geneva", "CH"),
    ("milan", "IT"),
    ("turin", "IT"),
    ("madrid", "ES"),
    ("lisbon", "PT"),
    ("stockholm", "SE"),
    ("oslo", "NO"),
    ("helsinki", "FI"),
    ("copenhagen", "DK"),
    ("warsaw", "PL"),
    ("vienna", "AT"),
    ("prague", "CZ"),
    ("sofia", "BG"),
    ("ashburn", "US"),
    ("siliconvalley", "US"),
    ("sanjose", "US"),
    ("phoenix", "US"),
    ("chicago", "US"),
    ("dallas", "US"),
    ("saltlake", "US"),
    ("virginia", "US"),
    ("oregon", "US"),
    ("ohio", "US"),
    ("california", "US"),
    ("texas", "US"),
    ("newyork", "US"),
    ("seattle", "US"),
    ("atlanta", "US"),
    ("toronto", "CA"),
    ("montreal", "CA"),
    ("vancouver", "CA"),
    ("queretaro", "MX"),
    ("monterrey", "MX"),
    ("saopaulo", "BR"),
    ("vinhedo", "BR"),
    ("santiago", "CL"),
    ("valparaiso", "CL"),
    ("johannesburg", "ZA"),
    ("capetown", "ZA"),
    ("casablanca", "MA"),
    ("jeddah", "SA"),
    ("riyadh", "SA"),
    ("dubai", "AE"),
    ("abudhabi", "AE"),
    ("jerusalem", "IL"),
    ("telaviv", "IL"),
    ("doha", "QA"),
    // Azure's and GCP's compound words (country names are found by the name fallback)
    ("westeurope", "NL"),
    ("northeurope", "IE"),
    ("southeastasia", "SG"),
    ("eastasia", "HK"),
    ("uksouth", "GB"),
    ("ukwest", "GB"),
    ("uae", "AE"),
];

/// GCP and AWS regions named by direction: (prefix, country).
const NUMBERED: &[(&str, &str)] = &[
    // GCP
    ("europe-west1", "BE"),
    ("europe-west2", "GB"),
    ("europe-west3", "DE"),
    ("europe-west4", "NL"),
    ("europe-west6", "CH"),
    ("europe-west8", "IT"),
    ("europe-west9", "FR"),
    ("europe-west10", "DE"),
    ("europe-west12", "IT"),
    ("europe-north1", "FI"),
    ("europe-north2", "SE"),
    ("europe-central2", "PL"),
    ("europe-southwest1", "ES"),
    ("asia-east1", "TW"),
    ("asia-east2", "HK"),
    ("asia-northeast1", "JP"),
    ("asia-northeast2", "JP"),
    ("asia-northeast3", "KR"),
    ("asia-south1", "IN"),
    ("asia-south2", "IN"),
    ("asia-southeast1", "SG"),
    ("asia-southeast2", "ID"),
    ("me-west1", "IL"),
    ("me-central1", "QA"),
    ("me-central2", "SA"),
    ("africa-south1", "ZA"),
    ("northamerica-northeast", "CA"),
    ("northamerica-south1", "MX"),
    ("southamerica-east1", "BR"),
    ("southamerica-west1", "CL"),
    ("australia-southeast", "AU"),
    // AWS (and Lambda, which names its regions the same way)
    ("ap-northeast-1", "JP"),
    ("ap-northeast-2", "KR"),
    ("ap-northeast-3", "JP"),
    ("ap-southeast-1", "SG"),
    ("ap-southeast-2", "AU"),
    ("ap-southeast-3", "ID"),
    ("ap-southeast-4", "AU"),
    ("ap-southeast-5", "MY"),
    ("ap-southeast-7", "TH"),
    ("ap-south-1", "IN"),
    ("ap-south-2", "IN"),
    ("ap-east-1", "HK"),
    ("eu-central-1", "DE"),
    ("eu-central-2", "CH"),
    ("eu-west-1", "IE"),
    ("eu-west-2", "GB"),
    ("eu-west-3", "FR"),
    ("eu-north-1", "SE"),
    ("eu-south-1", "IT"),
    ("eu-south-2", "ES"),
    ("me-south-1", "BH"),
    ("me-central-1", "AE"),
    ("il-central-1", "IL"),
    ("af-south-1", "ZA"),
    ("sa-east-1", "BR"),
    ("mx-central-1", "MX"),
    ("asia-northeast-1", "JP"),
    ("asia-northeast-2", "KR"),
    ("asia-south-1", "IN"),
    ("europe-central-1", "DE"),
    ("europe-south-1", "IT"),
    ("me-west-1", "IL"),
];

/// Providers whose own names break the common schemes: (provider, region prefix, country).
const PROVIDER_REGIONS: &[(&str, &str, &str)] = &[
    // Huawei Cloud: cn-north-4 Beijing, cn-east-3 Shanghai, cn-south-1 Guangzhou; its
    // ap-southeast-1 is Hong Kong, -2 Bangkok, -3 Singapore.
    ("huawei", "ap-southeast-1", "HK"),
    ("huawei", "ap-southeast-2", "TH"),
    ("huawei", "ap-southeast-3", "SG"),
    // Alibaba Cloud: ap-southeast-1 Singapore (as AWS), ap-northeast-1 Tokyo.
    ("alibaba", "ap-southeast-3", "MY"),
    ("alibaba", "ap-southeast-5", "ID"),
    // Nebius: eu-north1 Finland, eu-west1 Paris, us-central1 Kansas City.
    ("nebius", "eu-north1", "FI"),
    ("nebius", "eu-west1", "FR"),
];

fn country(code: &str) -> Option<Place> {
    COUNTRIES
        .iter()
        .find(|(c, _, _)| c.eq_ignore_ascii_case(code))
        .map(|(c, a, _)| Place {
            country: c,
            area: a,
        })
}

/// Where `region` of `provider` is, if any scheme places it.
pub fn place(provider: &str, region: &str) -> Option<Place> {
    let r = region.trim().to_lowercase();
    let p = provider.to_lowercase();
    // Vast's "City, CC, AREA" (the city part may be empty): the code.
    let parts: Vec<&str> = region.split(',').map(str::trim).collect();
    if parts.len() >= 2
        && let Some(pl) = parts.iter().rev().skip(1).find_map(|x| {
            (x.len() == 2 && x.chars().all(|c| c.is_ascii_uppercase()))
                .then(|| country(x))
                .flatten()
        })
    {
        return Some(pl);
    }
    // RunPod and others: a bare country code.
    if region.len() == 2 && region.chars().all(|c| c.is_ascii_uppercase()) {
        return country(region);
    }
    if let Some((_, _, c)) = PROVIDER_REGIONS
        .iter()
        .find(|(pv, pre, _)| p.contains(pv) && r.starts_with(pre))
    {
        return country(c);
    }
    if let Some((_, c)) = NUMBERED.iter().find(|(pre, _)| r.starts_with(pre)) {
        return country(c);
    }
    let squashed: String = r.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    if let Some((_, c)) = CITIES.iter().find(|(w, _)| squashed.contains(w)) {
        return country(c);
    }
    if let Some(c) = slug_code(&squashed) {
        return country(c);
    }
    if let Some(c) = named_country(&r, &squashed) {
        return country(c);
    }
    let first = r.split(['-', '_', ' ']).next().unwrap_or("");
    if let Some(c) = leading_code(first, &squashed) {
        return country(c);
    }
    area_only(first)
}

/// DigitalOcean's slugs: a city's airport code and a number (nyc1, ams3, sgp1); the
/// country code of the city, if it is one of theirs.
fn slug_code(squashed: &str) -> Option<&'static str> {
    let letters: String = squashed
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    if !((2..=3).contains(&letters.len())
        && squashed[letters.len()..]
            .chars()
            .all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    match letters.as_str() {
        "nyc" | "ny" | "sfo" | "atl" | "ric" => Some("US"),
        "tyo" => Some("JP"),
        "ams" => Some("NL"),
        "fra" => Some("DE"),
        "lon" => Some("GB"),
        "tor" => Some("CA"),
        "blr" => Some("IN"),
        "sgp" => Some("SG"),
        "syd" => Some("AU"),
        _ => None,
    }
}

/// The code of a country the region's name names: a word that is a country's code or
/// name, digits aside (Shadeform's `austin-usa-1`, Hyperstack's `CANADA-1`, Verda's
/// `FIN-01`, Jarvislabs' `IN2`), else a country's name within it (Spheron's "Finland 3").
fn named_country(r: &str, squashed: &str) -> Option<&'static str> {
    for token in r.split(|c: char| !c.is_ascii_alphanumeric()) {
        let w = token.trim_end_matches(|c: char| c.is_ascii_digit());
        if w.len() < 2 {
            continue;
        }
        if let Some((c, _, _)) = COUNTRIES.iter().find(|(_, _, words)| words.contains(&w)) {
            return Some(*c);
        }
    }
    COUNTRIES
        .iter()
        .find(|(_, _, words)| words.iter().any(|w| w.len() >= 5 && squashed.contains(w)))
        .map(|(c, _, _)| *c)
}

/// The code of the country the first word names (`us-east-1`, `cn-hangzhou`,
/// `uk-london-1`, Tencent's `na-ashburn`), or US for Azure's US regions (`eastus`,
/// `southcentralus`).
fn leading_code(first: &str, squashed: &str) -> Option<&'static str> {
    let lead = match first {
        "us" | "usa" | "na" | "northamerica" => Some("US"),
        "cn" => Some("CN"),
        "uk" => Some("GB"),
        "ca" => Some("CA"),
        "in" => Some("IN"),
        "jp" => Some("JP"),
        "kr" => Some("KR"),
        "sg" => Some("SG"),
        "au" => Some("AU"),
        "br" => Some("BR"),
        "de" => Some("DE"),
        "fr" => Some("FR"),
        "nl" => Some("NL"),
        _ => None,
    };
    if lead.is_some() {
        return lead;
    }
    (squashed.ends_with("us")
        || squashed.ends_with("us2")
        || squashed.ends_with("us3")
        || squashed.starts_with("us"))
    .then_some("US")
}

/// An area without a country (a region `eu-...` no table knows): the area alone.
fn area_only(first: &str) -> Option<Place> {
    let area = match first {
        "eu" | "europe" => Some("eu"),
        "ap" | "asia" => Some("as"),
        "me" => Some("me"),
        "af" | "africa" => Some("af"),
        "sa" | "southamerica" => Some("sa"),
        _ => None,
    };
    area.map(|area| Place {
        country: UNKNOWN_COUNTRY,
        area,
    })
}

/// The country of a place known only by its area.
pub const UNKNOWN_COUNTRY: &str = "??";

/// What a `--region` value names: a country, an area, or neither (a part of the name).
#[derive(Clone, Debug, PartialEq)]
pub enum Wanted {
    Country(Place),
    Area(&'static str),
    Name(String),
}

impl Wanted {
    pub fn parse(s: &str) -> Wanted {
        let w: String = s.trim().to_lowercase().replace(' ', "");
        if let Some((a, _)) = AREAS.iter().find(|(_, words)| words.contains(&w.as_str())) {
            return Wanted::Area(a);
        }
        if let Some((c, a, _)) = COUNTRIES
            .iter()
            .find(|(c, _, words)| c.eq_ignore_ascii_case(&w) || words.contains(&w.as_str()))
        {
            return Wanted::Country(Place {
                country: c,
                area: a,
            });
        }
        Wanted::Name(w)
    }

    /// Whether a row of `provider` in `region` is what was asked for. A place (country or
    /// area) matches by where the region is, never by a part of its name.
    pub fn matches(&self, provider: &str, region: &str) -> bool {
        match self {
            Wanted::Name(n) => region.to_lowercase().replace(' ', "").contains(n.as_str()),
            Wanted::Country(want) => {
                place(provider, region).is_some_and(|p| p.country == want.country)
            }
            Wanted::Area(a) => place(provider, region).is_some_and(|p| p.area == *a),
        }
    }

    /// The place asked for in words, for the notes.
    pub fn describe(&self) -> String {
        match self {
            Wanted::Country(p) => format!("the country {} (area {})", p.country, p.area),
            Wanted::Area(a) => format!("the area {a}"),
            Wanted::Name(n) => format!("region names containing {n:?}"),
        }
    }
}

/// For `--region` as a place: how many rows are there, and how many rows no scheme places
/// (left out by it, named by their regions). None for a part of a name.
pub fn note(region: &str, instances: &[super::Instance]) -> Option<String> {
    let wanted = Wanted::parse(region);
    if matches!(wanted, Wanted::Name(_)) {
        return None;
    }
    let there = instances
        .iter()
        .filter(|i| wanted.matches(&i.provider, &i.region))
        .count();
    let mut unplaced: Vec<&str> = instances
        .iter()
        .filter(|i| place(&i.provider, &i.region).is_none())
        .map(|i| i.region.as_str())
        .collect();
    let rows = unplaced.len();
    unplaced.sort_unstable();
    unplaced.dedup();
    let names: Vec<String> = unplaced
        .iter()
        .take(6)
        .map(|r| {
            if r.is_empty() {
                "(none)".to_string()
            } else {
                (*r).to_string()
            }
        })
        .collect();
    Some(format!(
        "Region: --region {region} is {}: {there} catalog rows there{}.",
        wanted.describe(),
        if rows == 0 {
            String::new()
        } else {
            format!(
                "; {rows} rows whose region gpuvalue cannot place ({}{}) are left out",
                names.join(", "),
                if unplaced.len() > 6 { ", ..." } else { "" }
            )
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(provider: &str, region: &str) -> Option<&'static str> {
        place(provider, region).map(|p| p.country)
    }

    #[test]
    fn every_scheme_places_its_regions() {
        for (provider, region, want) in [
            ("tencent", "ap-beijing", "CN"),
            ("tencent", "na-ashburn", "US"),
            ("alibaba", "cn-hangzhou", "CN"),
            ("huawei", "cn-north-4", "CN"),
            ("huawei", "ap-southeast-1", "HK"),
            ("aws", "ap-southeast-1", "SG"),
            ("aws", "us-east-1", "US"),
            ("aws", "eu-west-1", "IE"),
            ("gcp", "europe-west4", "NL"),
            ("gcp", "asia-northeast1", "JP"),
            ("gcp", "us-central1", "US"),
            ("azure", "eastus2", "US"),
            ("azure", "southcentralus", "US"),
            ("azure", "westeurope", "NL"),
            ("azure", "switzerlandwest", "CH"),
            ("azure", "japaneast", "JP"),
            ("azure", "germanywestcentral", "DE"),
            ("azure", "centralindia", "IN"),
            ("azure", "koreacentral", "KR"),
            ("azure", "southafricanorth", "ZA"),
            ("azure", "australiaeast", "AU"),
            ("azure", "brazilsouth", "BR"),
            ("azure", "canadacentral", "CA"),
            ("azure", "uaenorth", "AE"),
            ("azure", "francecentral", "FR"),
            ("azure", "swedencentral", "SE"),
            ("azure", "eastasia", "HK"),
            ("oci", "af-casablanca-1", "MA"),
            ("oci", "eu-frankfurt-1", "DE"),
            ("oci", "uk-london-1", "GB"),
            ("lambda", "asia-northeast-1", "JP"),
            ("lambda", "europe-central-1", "DE"),
            ("lambda", "me-west-1", "IL"),
            ("runpod", "CZ", "CZ"),
            ("vast", "Sweden, SE, EU", "SE"),
            ("vast", ", US, NA", "US"),
            ("digitalocean", "nyc1", "US"),
            ("hotaisle", "us-michigan-1", "US"),
            ("spheron", "Finland 3", "FI"),
            ("digitalocean", "ams3", "NL"),
            ("shadeform", "austin-usa-1", "US"),
            ("hyperstack", "CANADA-1", "CA"),
            ("verda", "FIN-03", "FI"),
            ("jarvislabs", "IN2", "IN"),
            ("seeweb", "it-fr2", "IT"),
            ("cudo", "no-kristiansand-1", "NO"),
            ("spheron", "SYD2", "AU"),
            ("spheron", "atl", "US"),
            ("lambda", "australia-east-1", "AU"),
            ("nebius", "eu-north1", "FI"),
        ] {
            assert_eq!(c(provider, region), Some(want), "{provider} {region}");
        }
        for region in ["any", "earth", "default", ""] {
            assert_eq!(c("x", region), None, "{region}");
        }
        // An area a table does not break down further: the area, no country.
        let p = place("newcloud", "eu-east7").unwrap();
        assert_eq!((p.country, p.area), (UNKNOWN_COUNTRY, "eu"));
        assert!(!Wanted::parse("de").matches("newcloud", "eu-east7"));
        assert!(Wanted::parse("europe").matches("newcloud", "eu-east7"));
    }

    #[test]
    fn a_place_matches_by_where_and_a_word_by_name() {
        let china = Wanted::parse("china");
        assert!(china.matches("tencent", "ap-beijing"));
        assert!(china.matches("alibaba", "cn-beijing"));
        assert!(!china.matches("aws", "us-east-1"));
        assert_eq!(Wanted::parse("CN"), china);
        let eu = Wanted::parse("eu");
        assert!(eu.matches("gcp", "europe-west4"));
        assert!(eu.matches("vast", "Sofia-Capital, BG, EU"));
        assert!(!eu.matches("aws", "us-east-1"));
        // "us" is the United States, not any name with "us" in it (Russia, Australia).
        let us = Wanted::parse("us");
        assert!(us.matches("azure", "eastus"));
        assert!(!us.matches("vast", "Moscow, RU, EU"));
        assert!(!us.matches("aws", "ap-southeast-2"));
        // Not a place: a part of the region's name, as before.
        assert!(Wanted::parse("west").matches("azure", "westeurope"));
    }
}
