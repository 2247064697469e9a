//! Output for people: terminal tables for devices and results.

pub mod catalog;
pub mod compare;
pub mod fmt;
pub mod html;
pub mod rank;
pub mod svg;
pub mod table;
