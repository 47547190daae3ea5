"""The frame: page config, the shared sidebar, and navigation over the lessons in pages/.

`streamlit run streamlit_app.py` finds `app` below and imports this file to serve it: the
server then imports torch and every page's modules before it accepts the first student
(`server.warm_start`), so a class that opens the link on a server already started does not
queue behind those seconds. Each student's run executes this file as a script (`__main__`),
and that draws the frame.
"""

import streamlit as st

from dashboard import server

if __name__ != "__main__":  # imported to be served, not run for a student
    from starlette.middleware import Middleware

    from dashboard.frontend_files import FrontendFiles

    # Streamlit's frontend files compressed once, from memory: a browser's first visit costs
    # the one process a fraction of its CPU (dashboard/frontend_files.py)
    app = st.App(__file__, lifespan=server.warm_start, middleware=[Middleware(FrontendFiles)])
else:
    from dashboard import controls, frame
    from dashboard.classroom import bar, seat
    from dashboard.render import layout, presenter

    server.tune_malloc()  # before the class's script threads allocate: see its docstring
    server.disable_nagle()  # a rerun's last messages leave without waiting for an ACK: see there
    server.keep_made_downloads()  # a file made on click is still there when the browser asks
    bar.follow()  # a sent view the follow panel asked for: switch to it before drawing anything
    present = presenter.presenter_mode()  # ?present=1: sidebar closed, large charts, stage by stage
    st.set_page_config(
        page_title="Self-attention, step by step",
        page_icon=str(frame.ICON),  # a file of ours: a :material/ icon's favicon comes from a CDN
        layout="wide",
        # "auto": open on a laptop or a projector, closed on a phone (where it would cover it)
        initial_sidebar_state="collapsed" if present else "auto",
    )
    page = frame.navigation()
    layout.page_style()  # room for toolbars on touch screens (see there)
    layout.save_charts()  # every chart as SVG or PNG for slides, named after its lesson
    controls.open_link(page.url_path, frame.LINK_KEYS)  # a link's settings win over the session's
    bar.class_bar(page)  # a joined student follows the teacher; the teacher sends the view
    controls.sidebar(frame.sidebar_uses(page), frame.LESSON_PARAMS)
    presenter.keep_presenter_link(present)
    server.import_page(frame.page_file(page))  # first imports one thread at a time: see there
    server.run_page(page)  # one student's script at a time: see there
    seat.write_cookies()  # what the page queued: a learner's progress (dashboard/progress.py)
    server.warm_up()
