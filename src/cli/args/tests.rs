use super::*;

#[test]
fn format_names_are_what_format_takes() {
    for f in Format::value_variants() {
        assert_eq!(f.to_possible_value().unwrap().get_name(), f.name());
    }
}

#[test]
fn legacy_flags_map_to_formats() {
    assert_eq!(Format::chosen(None, false, false, false), Format::Table);
    assert_eq!(Format::chosen(None, true, false, false), Format::Json);
    assert_eq!(Format::chosen(None, false, true, false), Format::Csv);
    assert_eq!(Format::chosen(None, false, false, true), Format::Markdown);
    assert_eq!(
        Format::chosen(Some(Format::Csv), false, false, false),
        Format::Csv
    );
    let rank = |args: &[&str]| {
        let mut argv = vec!["gpuvalue", "rank"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Some(Command::Rank(a))) => Ok(a.output.format()),
            Ok(_) => unreachable!(),
            Err(e) => Err(e.kind()),
        }
    };
    assert_eq!(rank(&[]), Ok(Format::Table));
    assert_eq!(rank(&["--csv"]), Ok(Format::Csv));
    assert_eq!(rank(&["--format", "markdown"]), Ok(Format::Markdown));
    assert_eq!(
        rank(&["--format", "json", "--json"]),
        Err(clap::error::ErrorKind::ArgumentConflict)
    );
    assert_eq!(
        rank(&["--format", "html"]),
        Err(clap::error::ErrorKind::InvalidValue)
    );
}
