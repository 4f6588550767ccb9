"""The command line, a front end like ``ui``: parser, commands, add arguments, output
(tables and JSON), import and export. Qt is never imported here.
"""
