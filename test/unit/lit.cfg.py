# -*- Python -*-
# GoogleTest binaries: every TEST() is one lit test.
import lit.formats

config.name = "mgs-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.mgs_unit_tests_dir
config.test_exec_root = config.mgs_unit_tests_dir
