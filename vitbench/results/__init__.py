"""Results, torch-free: the result.json vocabulary and the task records' type and registry (``schema``; each task's
package registers its own record), the leaderboard table built from the records (``table``, over ``result_file``,
``record_cells``, ``rows``, ``columns``, ``price``), the papers' reference rows (``paper``, read from the map of the
papers: ``paper_map``, ``papers/``; its coverage: ``coverage``), and its rendering to Markdown, CSV (wide and tidy)
and HTML (``render``, ``render_md``, ``render_csv``, ``render_tidy``, ``render_html`` with its column groups,
``column_groups``, over the text they share, ``render_text``, made harmless, ``plain_text``; ``plots``)."""
