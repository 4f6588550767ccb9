"""The main window and the parts it is made of: the toolbar and menus, the filter bar,
the table view, the status line, the empty states and banners, and its questions.
"""
