"""Cron as cronie means it: the five-field grammar, the calendar that matches it, the
DST rules for wildcard and fixed-time jobs, and a description in words.
"""
