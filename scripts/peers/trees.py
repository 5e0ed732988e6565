"""The trees the peer comparisons watch, built the same way by every script that measures one."""
import os


def make_tree(root, directories, files_each):
    """`directories` directories of `files_each` empty files each under `root`, breadth first,
    ten subdirectories to a directory: a tree as deep as a real one of that size, not one flat
    directory whose listing would be the whole cost."""
    made, queue = 0, [root]
    while made < directories and queue:
        parent = queue.pop(0)
        for index in range(10):
            if made >= directories:
                break
            directory = os.path.join(parent, f"d{index}")
            os.mkdir(directory)
            for file in range(files_each):
                open(os.path.join(directory, f"f{file}"), "w").close()
            queue.append(directory)
            made += 1
