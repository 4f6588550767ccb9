"""Interchange formats: the export file, crontabs, the plan of an import and its report.

Pure: they read and write text and plan against a list of tasks; the stores and the
front ends do the reading of files and the committing.
"""
