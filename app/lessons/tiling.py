PANELS = {}
