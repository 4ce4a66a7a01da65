# A stand-in for python:3.11-slim-bookworm built from Debian's own packages, for machines that
# reach Debian's mirror but no container registry (tools/image.sh builds it only then, and says
# so). ROOTFS is a `debootstrap --variant=minbase bookworm` tree imported as an image. Debian's
# python3.11 (3.11.2) takes the place of the official image's; the lock is resolved for 3.11.
ARG ROOTFS
FROM ${ROOTFS}
ENV LANG=C.UTF-8
# What Debian's own container images set: the same suites (the point-release and security
# updates too, so that the Dockerfile's pinned git is found), no downloaded .deb files or package
# lists kept after apt runs, and no docs, man pages or locales installed (the "slim" excludes).
RUN printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\nAPT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
        > /etc/apt/apt.conf.d/docker-clean \
 && printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\npath-exclude /usr/share/groff/*\npath-exclude /usr/share/info/*\npath-exclude /usr/share/lintian/*\npath-exclude /usr/share/linda/*\npath-exclude /usr/share/locale/*\n' \
        > /etc/dpkg/dpkg.cfg.d/docker \
 && printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        > /etc/apt/sources.list.d/debian.sources \
 && rm -f /etc/apt/sources.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3.11 python3.11-venv ca-certificates \
 && ln -s /usr/bin/python3.11 /usr/local/bin/python3 \
 && ln -s /usr/bin/python3.11 /usr/local/bin/python \
 && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log \
 && find /usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete \
 && rm -rf /usr/share/man/* /usr/share/info/* /usr/share/locale/*
CMD ["python3"]
