"""Results, torch-free: the result.json vocabulary (``schema``), the leaderboard table built from the records
(``table``), the papers' reference rows (``paper``, ``paper_results.yaml``), and its rendering to Markdown,
CSV and HTML (``render``, ``plots``)."""
