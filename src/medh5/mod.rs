//! The medh5 medical-imaging container (`shared/spec/medh5.md`).
